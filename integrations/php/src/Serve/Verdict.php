<?php

declare(strict_types=1);

namespace Veto\Serve;

use Veto\Runtime\Code;
use Veto\Runtime\ToolInvocationTarget;

/**
 * veto's verdict on one call, read from its answer and checked field by
 * field: allow, deny or ask (a question for a person), the rule and reason
 * code of a refusal, its sentence, the target veto resolved and the
 * arguments to run with when the policy patched them.
 */
final readonly class Verdict
{
    public const ALLOW = 'allow';
    public const DENY = 'deny';
    public const ASK = 'ask';

    /**
     * @param array<string, mixed>|null $args
     */
    public function __construct(
        public string $verdict,
        public string $callId,
        public string $reason,
        public string $rule,
        public string $message,
        public string $risk,
        public string $stage,
        public ?ToolInvocationTarget $target,
        public ?array $args,
        public int $seq,
    ) {
    }

    public function allowed(): bool
    {
        return $this->verdict === self::ALLOW;
    }

    public function asks(): bool
    {
        return $this->verdict === self::ASK;
    }

    /**
     * The verdict of /v1/decide's answer for the call $callId. A 503 or
     * 504 carrying a verdict is that verdict (a deny: the state or the
     * deadline refused it); an allow there is no answer veto gives.
     */
    public static function fromReply(Reply $r, string $callId): self
    {
        return self::fromObject($r, $r->object([200, 503, 504]), $callId);
    }

    /**
     * @param array<string, mixed> $j
     */
    public static function fromObject(Reply $r, array $j, string $callId): self
    {
        $verdict = $j['verdict'] ?? null;
        if (!in_array($verdict, [self::ALLOW, self::DENY, self::ASK], true)) {
            throw $r->invalid('holds no verdict');
        }
        if ($r->status !== 200 && $verdict !== self::DENY) {
            throw $r->invalid('is not a refusal though its status is one');
        }
        foreach (['call_id', 'tool', 'run', 'stage', 'rule', 'reason', 'risk', 'message'] as $k) {
            if (array_key_exists($k, $j) && !is_string($j[$k])) {
                throw $r->invalid('holds a ' . $k . ' that is not a string');
            }
        }
        $got = $j['call_id'] ?? '';
        if ($callId !== '' && $got !== $callId) {
            throw $r->invalid('is the verdict on another call');
        }
        $reason = $j['reason'] ?? '';
        if ($verdict !== self::ALLOW && !Code::valid($reason)) {
            throw $r->invalid('refuses the call without a stable reason code');
        }
        if ($verdict === self::ALLOW && $reason !== '') {
            $reason = ''; // an allow has no reason; none is taken from it
        }
        $rule = $j['rule'] ?? '';
        if ($rule !== '' && strlen($rule) > 128) {
            throw $r->invalid('names a rule longer than a rule id');
        }
        $target = null;
        if (array_key_exists('target', $j)) {
            $t = $j['target'];
            if (!is_array($t) || !is_string($t['kind'] ?? null) || !is_string($t['id'] ?? null)) {
                throw $r->invalid('holds a target that is not a kind and an id');
            }
            if ($t['kind'] !== '' || $t['id'] !== '') {
                try {
                    $target = new ToolInvocationTarget($t['kind'], $t['id']);
                } catch (\InvalidArgumentException) {
                    throw $r->invalid('holds a target without a kind or an id');
                }
            }
        }
        $args = null;
        if (array_key_exists('args', $j) && $j['args'] !== null) {
            if (!is_array($j['args']) || ($j['args'] !== [] && array_is_list($j['args']))) {
                throw $r->invalid('holds arguments that are not an object');
            }
            $args = $j['args'];
        }
        $seq = $j['seq'] ?? 0;
        if (!is_int($seq) || $seq < 0) {
            throw $r->invalid('holds a sequence number that is not one');
        }
        $risk = $j['risk'] ?? '';
        if ($risk !== '' && !in_array($risk, ['none', 'low', 'medium', 'high', 'critical'], true)) {
            throw $r->invalid('holds a risk veto does not give');
        }
        $stage = $j['stage'] ?? '';
        if ($stage !== '' && !Code::valid($stage)) {
            throw $r->invalid('holds a stage that is not a code');
        }
        return new self($verdict, $got, $reason, $rule, Reply::sentence($j['message'] ?? ''), $risk, $stage, $target, $args, $seq);
    }
}
