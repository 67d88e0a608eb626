<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * One call the model proposed: its id, the tool's name and the final
 * arguments (after any human input replaced the model's values).
 */
final readonly class ToolCall
{
    /**
     * @param array<string, mixed> $arguments
     */
    public function __construct(
        public string $id,
        public string $name,
        public array $arguments = [],
    ) {
        if ($id === '' || $name === '') {
            throw new \InvalidArgumentException('A tool call needs an id and a tool name.');
        }
    }
}
