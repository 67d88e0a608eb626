<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * Told what each decided call did, once it ran (or was refused). An
 * exception means the observation was not recorded.
 */
interface ToolInvocationObserverInterface
{
    public function observe(ToolInvocationContext $context, string $outcome): void;
}
