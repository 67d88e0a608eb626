<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * A call parked until a person answers: what the runtime keeps in its own
 * state (toJson), and gives back to resume it (fromJson).
 *
 * $payload is the deciding service's own record of the call, opaque here.
 * It holds the call's arguments, so keep a suspension where the runtime
 * keeps the call itself, never in a log.
 */
final readonly class ToolInvocationSuspension
{
    public const VERSION = 1;

    public function __construct(
        public string $ruleIdentifier,
        public string $kind,
        public string $run,
        public string $callId,
        public string $tool,
        public string $reason,
        public string $message,
        public int $seq,
        public string $payload,
    ) {
        if (!Code::valid($ruleIdentifier) || !Code::valid($reason) || !in_array($kind, ['approval', 'input'], true)
            || $run === '' || $callId === '' || $tool === '' || $seq < 0) {
            throw new \InvalidArgumentException('A suspension names its rule, kind, run, call, tool and reason.');
        }
        try {
            $p = json_decode($payload, false, 64, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new \InvalidArgumentException('A suspension\'s payload is a JSON object.');
        }
        if (!$p instanceof \stdClass) {
            throw new \InvalidArgumentException('A suspension\'s payload is a JSON object.');
        }
    }

    public function toJson(): string
    {
        return json_encode([
            'v' => self::VERSION,
            'rule' => $this->ruleIdentifier,
            'kind' => $this->kind,
            'run' => $this->run,
            'call_id' => $this->callId,
            'tool' => $this->tool,
            'reason' => $this->reason,
            'message' => $this->message,
            'seq' => $this->seq,
            'payload' => $this->payload,
        ], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
    }

    /**
     * A stored suspension. Anything that does not read as one, of this
     * version, is an InvalidArgumentException: the runtime fails the call.
     */
    public static function fromJson(string $stored): self
    {
        try {
            $j = json_decode($stored, true, 8, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new \InvalidArgumentException('The stored suspension is not JSON.');
        }
        if (!is_array($j) || ($j['v'] ?? null) !== self::VERSION) {
            throw new \InvalidArgumentException('The stored suspension is not one of this version.');
        }
        foreach (['rule', 'kind', 'run', 'call_id', 'tool', 'reason', 'message', 'payload'] as $k) {
            if (!is_string($j[$k] ?? null)) {
                throw new \InvalidArgumentException('The stored suspension lacks its ' . $k . '.');
            }
        }
        if (!is_int($j['seq'] ?? null)) {
            throw new \InvalidArgumentException('The stored suspension lacks its seq.');
        }
        return new self($j['rule'], $j['kind'], $j['run'], $j['call_id'], $j['tool'], $j['reason'], $j['message'], $j['seq'], $j['payload']);
    }
}
