<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * The run's observations, kept apart from the model's transcript: each the
 * call's id, tool, outcome and target (or null). complete says whether the
 * runtime can prove it holds every prior call of the run.
 */
final readonly class ToolInvocationHistory
{
    /** The outcomes an observation may carry. */
    public const OUTCOMES = ['succeeded', 'failed', 'denied', 'cancelled', 'pending'];

    /**
     * @param list<array{call_id: string, tool: string, outcome: string, target: array{kind: string, identifier: string}|null}> $entries
     */
    public function __construct(
        public array $entries = [],
        public bool $complete = true,
    ) {
        foreach ($entries as $e) {
            if (!in_array($e['outcome'] ?? null, self::OUTCOMES, true) || ($e['tool'] ?? '') === '' || ($e['call_id'] ?? '') === '') {
                throw new \InvalidArgumentException('An observation needs a call id, a tool and one of the outcomes.');
            }
        }
    }

    /** An empty history that proves nothing: a run the runtime cannot vouch for. */
    public static function incomplete(): self
    {
        return new self([], false);
    }

    public function append(string $callId, string $tool, string $outcome, ?ToolInvocationTarget $target): self
    {
        return new self([...$this->entries, [
            'call_id' => $callId,
            'tool' => $tool,
            'outcome' => $outcome,
            'target' => $target?->toArray(),
        ]], $this->complete);
    }

    /** The same entries, no longer proved complete. */
    public function withoutProof(): self
    {
        return new self($this->entries, false);
    }

    /** @return array{entries: list<array{call_id: string, tool: string, outcome: string, target: array{kind: string, identifier: string}|null}>, complete: bool} */
    public function toArray(): array
    {
        return ['entries' => $this->entries, 'complete' => $this->complete];
    }

    /**
     * A stored history. One that does not read as one is incomplete and
     * empty: a damaged state proves nothing.
     */
    public static function fromArray(mixed $stored): self
    {
        if (!is_array($stored) || !is_array($stored['entries'] ?? null) || !is_bool($stored['complete'] ?? null)) {
            return self::incomplete();
        }
        $entries = [];
        foreach ($stored['entries'] as $e) {
            $target = $e['target'] ?? null;
            if (!is_array($e) || !is_string($e['call_id'] ?? null) || !is_string($e['tool'] ?? null) || !is_string($e['outcome'] ?? null)
                || ($target !== null && (!is_array($target) || !is_string($target['kind'] ?? null) || !is_string($target['identifier'] ?? null)))) {
                return self::incomplete();
            }
            $entries[] = ['call_id' => $e['call_id'], 'tool' => $e['tool'], 'outcome' => $e['outcome'],
                'target' => $target === null ? null : ['kind' => $target['kind'], 'identifier' => $target['identifier']]];
        }
        try {
            return new self($entries, $stored['complete']);
        } catch (\InvalidArgumentException) {
            return self::incomplete();
        }
    }
}
