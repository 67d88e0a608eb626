<?php

declare(strict_types=1);

namespace Veto\Serve;

use Veto\Runtime\ToolCall;
use Veto\Runtime\ToolExecutionContext;
use Veto\Runtime\ToolInvocationSuspension;

/**
 * veto serve's API, as the rule and the resolver use it: decide a call
 * once (the resolver and the rule share the one decision), suspend it for
 * a person, see whether the person answered, resume it, observe it.
 * Every method either returns what veto answered, checked, or throws a
 * VetoException naming why not.
 */
final class VetoGate
{
    /** How many decisions are held between the resolver and the rule. */
    private const MEMO = 32;

    /** @var array<string, Verdict|VetoException> */
    private array $memo = [];

    public function __construct(private readonly Client $client)
    {
    }

    public static function connect(string $url, #[\SensitiveParameter] string $token, float $timeout = 5.0): self
    {
        return new self(new Client($url, $token, $timeout));
    }

    public function client(): Client
    {
        return $this->client;
    }

    /**
     * veto's verdict on the call, asked once and held for take(): what the
     * target resolver calls, so the rule that follows decides nothing twice.
     */
    public function peek(ToolCall $call, ToolExecutionContext $ctx): Verdict
    {
        $key = self::key($call, $ctx);
        if (!isset($this->memo[$key])) {
            try {
                $this->memo[$key] = $this->decide($call, $ctx);
            } catch (VetoException $e) {
                $this->memo[$key] = $e;
            }
            while (count($this->memo) > self::MEMO) {
                unset($this->memo[array_key_first($this->memo)]);
            }
        }
        $v = $this->memo[$key];
        if ($v instanceof VetoException) {
            throw $v;
        }
        return $v;
    }

    /**
     * The verdict peek() holds for this very call (the same run, id, tool
     * and arguments), used up; or a new decision.
     */
    public function take(ToolCall $call, ToolExecutionContext $ctx): Verdict
    {
        $key = self::key($call, $ctx);
        if (isset($this->memo[$key])) {
            $v = $this->memo[$key];
            unset($this->memo[$key]);
            if ($v instanceof VetoException) {
                throw $v;
            }
            return $v;
        }
        return $this->decide($call, $ctx);
    }

    /** Asks veto to decide the call (POST /v1/decide). */
    public function decide(ToolCall $call, ToolExecutionContext $ctx): Verdict
    {
        $reply = $this->client->request('POST', '/v1/decide', Client::encode(self::call($call, $ctx)));
        return Verdict::fromReply($reply, $call->id);
    }

    /**
     * Parks a call veto asked a person about (POST /v1/suspend, kind
     * approval). The suspension is for the runtime to keep.
     */
    public function suspend(ToolCall $call, ToolExecutionContext $ctx, Verdict $question, string $ruleIdentifier): ToolInvocationSuspension
    {
        $body = Client::encode(['call' => self::call($call, $ctx), 'kind' => 'approval']);
        $reply = $this->client->request('POST', '/v1/suspend', $body);
        $reply->object(); // the status, the type, an object
        try {
            // Objects stay objects ({} is not []), numbers as written: the
            // arguments go back to veto as veto holds them.
            $j = json_decode($reply->body, false, 64, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException) {
            throw $reply->invalid('is not valid JSON');
        }
        if (!$j instanceof \stdClass || !isset($j->suspension) || !$j->suspension instanceof \stdClass
            || ($j->call_id ?? null) !== $call->id || ($j->run ?? null) !== $ctx->runReference) {
            throw $reply->invalid('is not the suspension of this call');
        }
        $payload = json_encode($j->suspension, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);
        return new ToolInvocationSuspension($ruleIdentifier, 'approval', $ctx->runReference, $call->id, $call->name,
            $question->reason, $question->message, $question->seq, $payload);
    }

    /**
     * Whether the call still waits for a person (GET /v1/approvals): false
     * once a person answered it, either way, or the question lapsed. resume()
     * then says which.
     */
    public function waiting(ToolInvocationSuspension $s): bool
    {
        $reply = $this->client->request('GET', '/v1/approvals?run=' . rawurlencode($s->run));
        $j = $reply->object();
        if (!is_array($j['pending'] ?? null) || !array_is_list($j['pending'])) {
            throw $reply->invalid('is not a list of the calls waiting for a person');
        }
        foreach ($j['pending'] as $q) {
            if (!is_array($q) || !is_string($q['run'] ?? null) || !is_string($q['call_id'] ?? null)) {
                throw $reply->invalid('is not a list of the calls waiting for a person');
            }
            if ($q['run'] === $s->run && $q['call_id'] === $s->callId) {
                return true;
            }
        }
        return false;
    }

    /**
     * Decides a suspended call again, with the live policy (POST
     * /v1/resume, approved): veto lets it through once when a person
     * approved it, and every other rule still applies.
     *
     * @return array{0: Verdict, 1: bool, 2: array<string, mixed>|null} the verdict, whether to execute, the arguments to run with
     */
    public function resume(ToolInvocationSuspension $s): array
    {
        $body = '{"suspension":' . $s->payload . ',"approved":true}';
        $reply = $this->client->request('POST', '/v1/resume', $body);
        $j = $reply->object([200, 503, 504]);
        if (!is_array($j['verdict'] ?? null) || !is_bool($j['execute'] ?? null)) {
            throw $reply->invalid('is not the verdict at resume');
        }
        $v = Verdict::fromObject($reply, $j['verdict'], $s->callId);
        $execute = $j['execute'] && $v->allowed();
        $args = null;
        if ($execute && array_key_exists('args', $j)) {
            if (!is_array($j['args']) || ($j['args'] !== [] && array_is_list($j['args']))) {
                throw $reply->invalid('holds arguments that are not an object');
            }
            $args = $j['args'];
        }
        return [$v, $execute, $args];
    }

    /** Records what the call did (POST /v1/observe). */
    public function observe(ToolCall $call, ToolExecutionContext $ctx, string $outcome): void
    {
        if (!in_array($outcome, ['succeeded', 'failed', 'denied', 'cancelled'], true)) {
            throw new VetoException(VetoException::CLIENT_FAILED, 'An outcome is succeeded, failed, denied or cancelled.');
        }
        $body = self::call($call, $ctx);
        $body['outcome'] = $outcome;
        $reply = $this->client->request('POST', '/v1/observe', Client::encode($body));
        $j = $reply->object();
        if (($j['recorded'] ?? null) !== true) {
            throw $reply->invalid('does not say the observation was recorded');
        }
    }

    /** Starts a run (POST /v1/runs); one with events is left as it is. */
    public function startRun(string $run, bool $fresh): void
    {
        $reply = $this->client->request('POST', '/v1/runs', Client::encode(['ref' => $run, 'fresh' => $fresh]));
        $j = $reply->object();
        if (($j['started'] ?? null) !== true) {
            throw $reply->invalid('does not say the run was started');
        }
    }

    /**
     * The call in veto check's JSON form. The actor's kind and id are the
     * token's; the sub-agent is named. The run carries the seed counters,
     * and a complete initial history is sent as veto's (it is used only
     * for a run veto has not seen).
     *
     * @return array<string, mixed>
     */
    public static function call(ToolCall $call, ToolExecutionContext $ctx): array
    {
        $args = $call->arguments;
        if ($args !== [] && array_is_list($args)) {
            throw new VetoException(VetoException::CLIENT_FAILED, 'The call\'s arguments are a list, not an object of named arguments, so it is refused.');
        }
        $c = [
            'tool' => $call->name,
            'call_id' => $call->id,
            'args' => $args === [] ? new \stdClass() : $args,
            'run' => [
                'ref' => $ctx->runReference,
                'fresh' => $ctx->fresh,
                'prior_turns' => $ctx->priorTurns,
                'prior_calls' => $ctx->priorCalls,
                'retries' => $ctx->retries,
            ],
        ];
        if ($ctx->agent !== '') {
            $c['actor'] = ['agent' => $ctx->agent];
        }
        if ($ctx->cwd !== '') {
            $c['cwd'] = $ctx->cwd;
        }
        if ($ctx->workspace !== '') {
            $c['workspace'] = $ctx->workspace;
        }
        $h = $ctx->initialInvocationHistory;
        if ($h !== null && $h->complete) {
            $obs = [];
            foreach ($h->entries as $e) {
                $o = ['call_id' => $e['call_id'], 'tool' => $e['tool'], 'outcome' => $e['outcome']];
                if ($e['target'] !== null) {
                    $o['target'] = ['kind' => $e['target']['kind'], 'id' => $e['target']['identifier']];
                }
                $obs[] = $o;
            }
            $c['history'] = ['observations' => $obs];
        }
        return $c;
    }

    private static function key(ToolCall $call, ToolExecutionContext $ctx): string
    {
        try {
            $fp = hash('sha256', serialize([$call->name, $call->arguments, $ctx]));
        } catch (\Throwable) {
            $fp = bin2hex(random_bytes(16)); // nothing to share: decide afresh
        }
        return $ctx->runReference . "\0" . $call->id . "\0" . $fp;
    }
}
