<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * A rule that adds restrictions immediately before a call executes.
 *
 * identifier() is a unique, stable code ([a-z][a-z0-9_.-]*, at most 64
 * characters). A rule whose requiresCompleteHistory() is true is refused
 * (history_incomplete) when the runtime cannot prove the run's history.
 * decide() returns ToolInvocationDecision::allow() or a denial with a
 * reason code; an exception refuses the call as rule_failed.
 */
interface ToolInvocationRuleInterface
{
    public function identifier(): string;

    public function requiresCompleteHistory(): bool;

    public function decide(ToolInvocationContext $context): ToolInvocationDecision;
}
