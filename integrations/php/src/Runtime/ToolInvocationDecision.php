<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * A rule's answer, in stable codes that can be recorded without the call's
 * arguments: allowed, or denied with a reason code; the rule that decided
 * is named by the policy (forRule).
 *
 * A denial may carry a suspension: the call waits for a person, and the
 * runtime keeps the suspension in its own state and resumes it once the
 * person has answered. $message is one sentence for a person, never argument
 * text. $arguments, when not null, are the arguments to run the call with
 * (a policy that patched them, or a resume). $detail holds codes only
 * (the deciding service's own rule id, the risk, the stage).
 */
final readonly class ToolInvocationDecision
{
    /**
     * @param array<string, mixed>|null $arguments
     * @param array<string, string> $detail
     */
    public function __construct(
        public bool $allowed,
        public string $reason = 'allowed',
        public string $ruleIdentifier = '',
        public string $message = '',
        public ?ToolInvocationSuspension $suspension = null,
        public ?array $arguments = null,
        public array $detail = [],
    ) {
        if (!Code::valid($reason) || ($ruleIdentifier !== '' && !Code::valid($ruleIdentifier))) {
            throw new \InvalidArgumentException('Reasons and rule identifiers are stable codes.');
        }
        if ($allowed && $suspension !== null) {
            throw new \InvalidArgumentException('An allowed call waits for no one.');
        }
    }

    public static function allow(): self
    {
        return new self(true);
    }

    public static function deny(string $reason, string $message = ''): self
    {
        return new self(false, $reason, '', $message);
    }

    public function forRule(string $identifier): self
    {
        return new self($this->allowed, $this->reason, $identifier, $this->message, $this->suspension, $this->arguments, $this->detail);
    }

    /** Whether the call waits for a person (a denial until then). */
    public function suspended(): bool
    {
        return $this->suspension !== null;
    }
}
