<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * What a rule sees of one call, immediately before it executes: the call
 * (its id, tool and final arguments), its resolved target or null, the
 * configuration the runtime runs it under, who runs it, and the run's
 * history.
 */
final readonly class ToolInvocationContext
{
    /**
     * @param array<string, mixed> $configuration
     */
    public function __construct(
        public ToolCall $call,
        public ?ToolInvocationTarget $target,
        public ToolExecutionContext $execution,
        public ToolInvocationHistory $history,
        public array $configuration = [],
    ) {
    }

    public function toolName(): string
    {
        return $this->call->name;
    }

    /** @return array<string, mixed> */
    public function arguments(): array
    {
        return $this->call->arguments;
    }
}
