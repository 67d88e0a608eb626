<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * The runtime's side: a conjunction of rules, evaluated for every call
 * until one denies, with the target resolved first.
 *
 * - Two resolvers claiming a call refuse it (target_ambiguous); a resolver's
 *   exception refuses it (target_unresolvable, or the exception's own stable code
 *   when it carries one: a ReasonedException).
 * - A rule requiring a complete history is refused on an incomplete one
 *   (history_incomplete); a rule's exception refuses the call (rule_failed).
 * - resume() decides a suspended call again: the rule that suspended it
 *   resumes it, every other rule decides it as for any call, and a denial
 *   is final (no new suspension).
 * - observe() reports a call's outcome to every observer and returns the
 *   history with it; an observer that failed leaves that history unproved.
 */
final class ToolInvocationPolicy
{
    /** @var array<string, ToolInvocationRuleInterface> */
    private array $rules = [];

    /** @var list<ToolTargetResolverInterface> */
    private array $resolvers;

    /**
     * @param iterable<ToolInvocationRuleInterface> $rules
     * @param iterable<ToolTargetResolverInterface> $resolvers
     */
    public function __construct(iterable $rules = [], iterable $resolvers = [])
    {
        foreach ($rules as $rule) {
            $id = $rule->identifier();
            if (!Code::valid($id) || isset($this->rules[$id])) {
                throw new \LogicException('Invocation rule identifiers are unique stable codes.');
            }
            $this->rules[$id] = $rule;
        }
        $this->resolvers = [];
        foreach ($resolvers as $r) {
            $this->resolvers[] = $r;
        }
    }

    /**
     * The call's target, or null when no resolver claims it.
     *
     * @throws TargetRefused when two resolvers claim it or one fails
     */
    public function resolveTarget(ToolCall $call, ToolExecutionContext $execution): ?ToolInvocationTarget
    {
        $target = null;
        foreach ($this->resolvers as $resolver) {
            try {
                $resolved = $resolver->resolve($call, $execution);
            } catch (\Throwable $e) {
                throw new TargetRefused(self::codeOf($e, 'target_unresolvable'), self::messageOf($e, 'The call\'s target could not be resolved, so the call is refused.'));
            }
            if ($resolved !== null) {
                if ($target !== null) {
                    throw new TargetRefused('target_ambiguous', 'More than one resolver claimed the call\'s target, so the call is refused.');
                }
                $target = $resolved;
            }
        }
        return $target;
    }

    /** The context of a call: its target resolved, or the refusal of it. */
    public function context(ToolCall $call, ToolExecutionContext $execution, ToolInvocationHistory $history, array $configuration = []): ToolInvocationContext|ToolInvocationDecision
    {
        try {
            $target = $this->resolveTarget($call, $execution);
        } catch (TargetRefused $e) {
            return ToolInvocationDecision::deny($e->reason, $e->getMessage())->forRule('target');
        }
        return new ToolInvocationContext($call, $target, $execution, $history, $configuration);
    }

    /** Resolves the target and decides: what a runtime calls before each call. */
    public function evaluate(ToolCall $call, ToolExecutionContext $execution, ToolInvocationHistory $history, array $configuration = []): ToolInvocationDecision
    {
        $context = $this->context($call, $execution, $history, $configuration);
        return $context instanceof ToolInvocationDecision ? $context : $this->decide($context);
    }

    public function decide(ToolInvocationContext $context): ToolInvocationDecision
    {
        $arguments = null;
        foreach ($this->rules as $id => $rule) {
            $decision = $this->one($rule, $context, static fn () => $rule->decide($context));
            if (!$decision->allowed) {
                return $decision->forRule($id);
            }
            $arguments ??= $decision->arguments;
        }
        return new ToolInvocationDecision(true, arguments: $arguments);
    }

    /**
     * Decides a suspended call again, immediately before it would run. The
     * context is the call as suspended (the same id, tool and arguments).
     */
    public function resume(ToolInvocationSuspension $suspension, ToolInvocationContext $context): ToolInvocationDecision
    {
        $owner = $this->rules[$suspension->ruleIdentifier] ?? null;
        if (!$owner instanceof ResumableRuleInterface || $context->call->id !== $suspension->callId || $context->call->name !== $suspension->tool) {
            return ToolInvocationDecision::deny('suspension_unknown', 'No rule of this runtime suspended this call, so it is refused.')->forRule('resume');
        }
        $arguments = null;
        foreach ($this->rules as $id => $rule) {
            $decision = $rule === $owner
                ? $this->one($rule, $context, static fn () => $owner->resume($suspension, $context))
                : $this->one($rule, $context, static fn () => $rule->decide($context));
            if ($decision->suspension !== null) {
                // A question at resume is a refusal: a person answers once.
                $decision = new ToolInvocationDecision(false, $decision->reason, '', $decision->message, null, null, $decision->detail);
            }
            if (!$decision->allowed) {
                return $decision->forRule($id);
            }
            $arguments ??= $decision->arguments;
        }
        return new ToolInvocationDecision(true, arguments: $arguments);
    }

    /**
     * Reports what the call did to every observer, and returns the history
     * with the observation. An observer that failed is not retried: the
     * history returned is no longer proved complete.
     */
    public function observe(ToolInvocationContext $context, string $outcome): ToolInvocationHistory
    {
        $history = $context->history->append($context->call->id, $context->call->name, $outcome, $context->target);
        foreach ($this->rules as $rule) {
            if (!$rule instanceof ToolInvocationObserverInterface) {
                continue;
            }
            try {
                $rule->observe($context, $outcome);
            } catch (\Throwable) {
                $history = $history->withoutProof();
            }
        }
        return $history;
    }

    /** @param callable(): ToolInvocationDecision $decide */
    private function one(ToolInvocationRuleInterface $rule, ToolInvocationContext $context, callable $decide): ToolInvocationDecision
    {
        if ($rule->requiresCompleteHistory() && !$context->history->complete) {
            return ToolInvocationDecision::deny('history_incomplete', 'The run\'s history cannot be proved complete, so the call is refused.');
        }
        try {
            $d = $decide();
        } catch (\Throwable $e) {
            return ToolInvocationDecision::deny(self::codeOf($e, 'rule_failed'), self::messageOf($e, 'The rule failed, so the call is refused.'));
        }
        return $d;
    }

    private static function codeOf(\Throwable $e, string $default): string
    {
        return $e instanceof ReasonedException && Code::valid($e->reason()) ? $e->reason() : $default;
    }

    /** An exception's text goes nowhere, unless it is a reasoned one's fixed sentence. */
    private static function messageOf(\Throwable $e, string $default): string
    {
        return $e instanceof ReasonedException ? $e->getMessage() : $default;
    }
}
