<?php

declare(strict_types=1);

namespace Veto\Serve;

use Veto\Runtime\Code;

/**
 * One HTTP answer of veto serve, as received: status, Content-Type and
 * body. Its readers check everything before a field is used: any doubt is
 * a VetoException, so the call is refused.
 */
final readonly class Reply
{
    public function __construct(
        public int $status,
        public string $contentType,
        public string $body,
        public string $service,
    ) {
    }

    /**
     * The body as a JSON object, for the statuses in $ok. A refusal (4xx)
     * in veto's Error form is a VetoException with veto's reason; any
     * other status, a body that is not a JSON object or not
     * application/json, is one with the client's.
     *
     * @param list<int> $ok
     * @return array<string, mixed>
     */
    public function object(array $ok = [200]): array
    {
        if (!in_array($this->status, $ok, true)) {
            $this->refusal();
        }
        return $this->decoded();
    }

    /** @return array<string, mixed> */
    private function decoded(): array
    {
        if (!self::isJson($this->contentType)) {
            throw new VetoException(VetoException::CONTENT_TYPE, sprintf(
                'veto serve at %s answered HTTP %d with a body that is not application/json, so the call is refused.',
                $this->service, $this->status), $this->status);
        }
        try {
            $j = json_decode($this->body, true, 64, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException) {
            throw $this->invalid('is not valid JSON');
        }
        if (!is_array($j) || ($j !== [] && array_is_list($j)) || ($j === [] && trim($this->body) !== '{}')) {
            throw $this->invalid('is not a JSON object');
        }
        return $j;
    }

    /** @return never */
    private function refusal(): void
    {
        if ($this->status >= 400 && $this->status < 500) {
            $reason = VetoException::REFUSED;
            $said = '';
            try {
                $j = $this->decoded();
                if (is_string($j['reason'] ?? null) && Code::valid($j['reason'])) {
                    $reason = $j['reason'];
                }
                if (is_string($j['message'] ?? null)) {
                    $said = ': ' . self::sentence($j['message']);
                }
            } catch (VetoException) {
                // A refusal in no form veto gives: its status says enough.
            }
            throw new VetoException($reason, sprintf('veto serve at %s refused the request (HTTP %d)%s', $this->service, $this->status, $said), $this->status);
        }
        if ($this->status >= 500 && $this->status < 600) {
            throw new VetoException(VetoException::SERVER_ERROR, sprintf(
                'veto serve at %s failed (HTTP %d) and gave no verdict, so the call is refused.', $this->service, $this->status), $this->status);
        }
        throw new VetoException(VetoException::REPLY_INVALID, sprintf(
            'veto serve at %s answered HTTP %d, which is no answer veto gives, so the call is refused.', $this->service, $this->status), $this->status);
    }

    public function invalid(string $what): VetoException
    {
        return new VetoException(VetoException::REPLY_INVALID, sprintf(
            'veto serve at %s answered HTTP %d with a body that %s, so the call is refused.', $this->service, $this->status, $what), $this->status);
    }

    /** Whether a Content-Type is application/json, parameters aside. */
    public static function isJson(string $contentType): bool
    {
        $media = strtolower(trim(explode(';', $contentType, 2)[0]));
        return $media === 'application/json';
    }

    /**
     * One of veto's own sentences, bounded and of printable text only: it
     * goes into a message a person and the model read.
     */
    public static function sentence(string $s, int $max = 600): string
    {
        if (!mb_check_encoding($s, 'UTF-8')) {
            return 'the sentence veto sent is not UTF-8.';
        }
        $s = preg_replace('/[\x00-\x1f\x7f\x{80}-\x{9f}\x{2028}\x{2029}\x{202a}-\x{202e}\x{2066}-\x{2069}]+/u', ' ', $s) ?? '';
        if (mb_strlen($s) > $max) {
            $s = mb_substr($s, 0, $max) . '…';
        }
        return $s;
    }
}
