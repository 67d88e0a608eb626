<?php

declare(strict_types=1);

namespace Veto\Serve;

use Veto\Runtime\ToolCall;
use Veto\Runtime\ToolExecutionContext;
use Veto\Runtime\ToolInvocationTarget;
use Veto\Runtime\ToolTargetResolverInterface;

/**
 * The call's target as veto resolves it: veto's verdict names the target
 * its resolvers found (kind file, the canonical path, symlinks of the
 * existing prefix resolved), so the runtime's history and veto's agree.
 *
 * It asks veto for the call's verdict once and holds it for the VetoRule
 * sharing its VetoGate, which then decides nothing twice. null for a call
 * veto names no target of; a VetoException when veto gave no verdict,
 * which refuses the call.
 */
final class VetoTargetResolver implements ToolTargetResolverInterface
{
    public function __construct(private readonly VetoGate $gate)
    {
    }

    public function resolve(ToolCall $call, ToolExecutionContext $context): ?ToolInvocationTarget
    {
        return $this->gate->peek($call, $context)->target;
    }
}
