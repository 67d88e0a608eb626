<?php

declare(strict_types=1);

namespace Veto\Serve;

use Veto\Runtime\Code;
use Veto\Runtime\ResumableRuleInterface;
use Veto\Runtime\ToolInvocationContext;
use Veto\Runtime\ToolInvocationDecision;
use Veto\Runtime\ToolInvocationObserverInterface;
use Veto\Runtime\ToolInvocationSuspension;

/**
 * The invocation rule that asks veto serve.
 *
 * - allow: the call runs (with veto's patched arguments, when it gave any);
 * - deny: refused with veto's reason code and sentence (detail: veto's rule,
 *   risk and stage);
 * - ask (a rule of veto's wants a person): the call is parked with veto
 *   (/v1/suspend) and the denial carries the suspension, for the runtime to
 *   keep; once a person answered (waiting() is false), resume() decides it
 *   again with veto's live policy (/v1/resume);
 * - any failure (veto unreachable, slow, a 5xx, a refusal, an answer that is
 *   not the one expected): refused with a veto_… reason naming the cause.
 *
 * veto keeps the run's history itself, from the decisions and observations
 * it is sent, so this rule needs no complete history from the runtime:
 * veto refuses on its own a call its rules cannot decide without one.
 */
final class VetoRule implements ResumableRuleInterface, ToolInvocationObserverInterface
{
    public function __construct(private readonly VetoGate $gate, private readonly string $identifier = 'veto')
    {
        if (!Code::valid($identifier)) {
            throw new \InvalidArgumentException('A rule identifier is a stable code.');
        }
    }

    public function identifier(): string
    {
        return $this->identifier;
    }

    public function requiresCompleteHistory(): bool
    {
        return false;
    }

    public function decide(ToolInvocationContext $context): ToolInvocationDecision
    {
        try {
            $v = $this->gate->take($context->call, $context->execution);
        } catch (VetoException $e) {
            return self::failure($e);
        }
        if ($v->allowed()) {
            return new ToolInvocationDecision(true, arguments: $v->args, detail: self::detail($v));
        }
        if (!$v->asks()) {
            return new ToolInvocationDecision(false, $v->reason, '', $v->message, detail: self::detail($v));
        }
        try {
            $s = $this->gate->suspend($context->call, $context->execution, $v, $this->identifier);
        } catch (VetoException $e) {
            return new ToolInvocationDecision(false, $e->reason(),
                '', 'veto asked for a person (' . $v->reason . '), and the call could not be parked for one: ' . $e->getMessage(), detail: self::detail($v));
        } catch (\InvalidArgumentException) {
            return new ToolInvocationDecision(false, VetoException::REPLY_INVALID, '',
                'veto asked for a person (' . $v->reason . '), and its suspension of the call cannot be kept, so the call is refused.', detail: self::detail($v));
        }
        return new ToolInvocationDecision(false, $v->reason, '', $v->message, $s, detail: self::detail($v));
    }

    /**
     * Whether the suspended call still waits for a person.
     *
     * @throws VetoException when veto cannot say
     */
    public function waiting(ToolInvocationSuspension $suspension): bool
    {
        return $this->gate->waiting($suspension);
    }

    /**
     * Waits up to $timeout seconds for a person to answer, asking every
     * $poll seconds; true once answered. A failure to ask is a VetoException.
     */
    public function awaitAnswer(ToolInvocationSuspension $suspension, float $timeout, float $poll = 0.5): bool
    {
        $until = microtime(true) + $timeout;
        while ($this->gate->waiting($suspension)) {
            if (microtime(true) >= $until) {
                return false;
            }
            usleep((int) (max(0.05, $poll) * 1e6));
        }
        return true;
    }

    public function resume(ToolInvocationSuspension $suspension, ToolInvocationContext $context): ToolInvocationDecision
    {
        if ($suspension->ruleIdentifier !== $this->identifier || $suspension->run !== $context->execution->runReference
            || $suspension->callId !== $context->call->id || $suspension->tool !== $context->call->name) {
            return ToolInvocationDecision::deny('suspension_mismatch', 'The suspension is not of this call, so the call is refused.');
        }
        try {
            [$v, $execute, $args] = $this->gate->resume($suspension);
        } catch (VetoException $e) {
            return self::failure($e);
        }
        if ($execute) {
            return new ToolInvocationDecision(true, arguments: $args, detail: self::detail($v));
        }
        // Refused at resume (a question again included): a failed call,
        // never a new suspension.
        $reason = $v->allowed() ? VetoException::REPLY_INVALID : $v->reason;
        return new ToolInvocationDecision(false, $reason, '', $v->message, detail: self::detail($v) + ['resume' => 'refused']);
    }

    /**
     * Reports the call's outcome to veto, for the run's history.
     *
     * @throws VetoException when veto did not record it
     */
    public function observe(ToolInvocationContext $context, string $outcome): void
    {
        $this->gate->observe($context->call, $context->execution, $outcome);
    }

    private static function failure(VetoException $e): ToolInvocationDecision
    {
        return new ToolInvocationDecision(false, $e->reason(), '', $e->getMessage(), detail: ['stage' => 'client']);
    }

    /** @return array<string, string> */
    private static function detail(Verdict $v): array
    {
        return array_filter(['veto_rule' => $v->rule, 'risk' => $v->risk, 'stage' => $v->stage], static fn (string $s) => $s !== '');
    }
}
