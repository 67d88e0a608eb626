<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * A rule whose denial can be a suspension (a question for a person). On
 * resume it decides the parked call again, immediately before it would
 * execute: a person's answer is not permission, and a denial at resume is
 * a failed tool call, never a new suspension.
 */
interface ResumableRuleInterface extends ToolInvocationRuleInterface
{
    public function resume(ToolInvocationSuspension $suspension, ToolInvocationContext $context): ToolInvocationDecision;
}
