<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * The resource a call acts on, as an authoritative resolver reports it: a
 * kind ("file") and an identifier (the canonical path). Never content or
 * credentials: targets are kept in the history.
 */
final readonly class ToolInvocationTarget
{
    public function __construct(public string $kind, public string $identifier)
    {
        if (trim($kind) === '' || trim($identifier) === '') {
            throw new \InvalidArgumentException('A resolved target needs a kind and an identifier.');
        }
    }

    /** @return array{kind: string, identifier: string} */
    public function toArray(): array
    {
        return ['kind' => $this->kind, 'identifier' => $this->identifier];
    }
}
