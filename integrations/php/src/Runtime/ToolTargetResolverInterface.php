<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * Resolves the target of calls it understands: the authoritative kind and
 * identifier, or null for a call it does not understand. It never guesses.
 * Two resolvers claiming one call, or an exception while resolving it,
 * refuse the call.
 */
interface ToolTargetResolverInterface
{
    public function resolve(ToolCall $call, ToolExecutionContext $context): ?ToolInvocationTarget;
}
