<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * Who runs a call, and in which run.
 *
 * $initiatingActor is the runtime's own record of who started the run (a
 * backend user, say); veto does not take it from a request: the actor a
 * call acts as is the token's (its kind and id), so it is not sent. $agent
 * names the sub-agent that proposed the call, when there is one, and is.
 * $runReference is the run; $fresh says the runtime assembled a fresh prompt
 * for it, and with all three seed counters zero a run veto has not seen
 * starts with a complete empty history. Otherwise $initialInvocationHistory,
 * when complete, is the authoritative record of the run's prior calls.
 * $cwd and $workspace are absolute directories the call acts in, for tools
 * that take paths (each must lie inside a --workspace-root of veto serve).
 */
final readonly class ToolExecutionContext
{
    public function __construct(
        public string $runReference,
        public string $initiatingActor = '',
        public string $agent = '',
        public bool $fresh = false,
        public int $priorTurns = 0,
        public int $priorCalls = 0,
        public int $retries = 0,
        public ?ToolInvocationHistory $initialInvocationHistory = null,
        public string $cwd = '',
        public string $workspace = '',
    ) {
        if ($runReference === '') {
            throw new \InvalidArgumentException('A call runs in a run: give its reference.');
        }
        if ($priorTurns < 0 || $priorCalls < 0 || $retries < 0) {
            throw new \InvalidArgumentException('The seed counters are never negative.');
        }
    }

    /** Whether any seed counter is nonzero. */
    public function seeded(): bool
    {
        return $this->priorTurns !== 0 || $this->priorCalls !== 0 || $this->retries !== 0;
    }
}
