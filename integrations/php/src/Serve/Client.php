<?php

declare(strict_types=1);

namespace Veto\Serve;

/**
 * The HTTP side: one request to veto serve with the bearer token, within a
 * timeout, reading at most $maxReply bytes. Every failure of transport is
 * a VetoException naming its cause; the answer is checked by its reader.
 * No proxy, no redirect, no cookies: the request goes to the address given.
 */
final class Client
{
    private readonly string $base;
    private readonly string $service;

    /**
     * @param string $url   veto serve's address: http://127.0.0.1:8181 (https beyond loopback)
     * @param string $token a service's token (veto token create --actor service:NAME)
     */
    public function __construct(
        string $url,
        #[\SensitiveParameter] private readonly string $token,
        private readonly float $timeout = 5.0,
        private readonly float $connectTimeout = 2.0,
        private readonly int $maxReply = 1 << 20,
    ) {
        $p = parse_url($url);
        if (!is_array($p) || !in_array($p['scheme'] ?? '', ['http', 'https'], true) || ($p['host'] ?? '') === ''
            || isset($p['user']) || isset($p['pass']) || isset($p['query']) || isset($p['fragment'])) {
            throw new \InvalidArgumentException('veto serve\'s address is http:// or https://, a host and a port, with no credentials in it.');
        }
        if ($token === '' || preg_match('/\A[\x21-\x7e]+\z/', $token) !== 1) {
            throw new \InvalidArgumentException('The token is one word of printable ASCII (veto_…).');
        }
        if ($timeout <= 0 || $connectTimeout <= 0 || $maxReply < 1024) {
            throw new \InvalidArgumentException('The timeouts are positive and the reply bound at least 1 KiB.');
        }
        $this->base = rtrim($url, '/');
        $this->service = $p['scheme'] . '://' . $p['host'] . (isset($p['port']) ? ':' . $p['port'] : '');
    }

    /** What var_dump and print_r show: the address, never the token. */
    public function __debugInfo(): array
    {
        return ['service' => $this->service];
    }

    /** A client is not stored: its token would be. */
    public function __serialize(): array
    {
        throw new \LogicException('A veto client is not serialized: it holds a token.');
    }

    /** The service's address as messages name it: scheme, host and port. */
    public function service(): string
    {
        return $this->service;
    }

    /** @throws VetoException when no answer came */
    public function request(string $method, string $path, ?string $body = null): Reply
    {
        $h = curl_init();
        if ($h === false) {
            throw new VetoException(VetoException::CLIENT_FAILED, 'curl could not start a request to veto serve, so the call is refused.');
        }
        $received = '';
        $tooLarge = false;
        $contentType = '';
        $headers = ['Authorization: Bearer ' . $this->token, 'Accept: application/json', 'Expect:'];
        if ($body !== null) {
            $headers[] = 'Content-Type: application/json';
        }
        $max = $this->maxReply;
        curl_setopt_array($h, [
            CURLOPT_URL => $this->base . $path,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_TIMEOUT_MS => (int) ceil($this->timeout * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int) ceil($this->connectTimeout * 1000),
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_PROXY => '',
            CURLOPT_NOPROXY => '*',
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_HEADERFUNCTION => static function ($h, string $line) use (&$contentType): int {
                if (stripos($line, 'content-type:') === 0) {
                    $contentType = trim(substr($line, strlen('content-type:')));
                }
                return strlen($line);
            },
            CURLOPT_WRITEFUNCTION => static function ($h, string $chunk) use (&$received, &$tooLarge, $max): int {
                if (strlen($received) + strlen($chunk) > $max) {
                    $tooLarge = true;
                    return 0; // aborts the transfer
                }
                $received .= $chunk;
                return strlen($chunk);
            },
        ]);
        if ($body !== null) {
            curl_setopt($h, CURLOPT_POSTFIELDS, $body);
        }
        $ok = curl_exec($h);
        $errno = curl_errno($h);
        $status = (int) curl_getinfo($h, CURLINFO_RESPONSE_CODE);
        curl_close($h);
        if ($tooLarge) {
            throw new VetoException(VetoException::REPLY_TOO_LARGE, sprintf(
                'veto serve at %s answered more than %d bytes, so the call is refused.', $this->service, $max));
        }
        if ($ok === false || $errno !== 0) {
            throw match ($errno) {
                CURLE_OPERATION_TIMEDOUT => new VetoException(VetoException::TIMEOUT, sprintf(
                    'veto serve at %s did not answer within %.1f s, so the call is refused.', $this->service, $this->timeout)),
                CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY => new VetoException(VetoException::UNREACHABLE, sprintf(
                    'veto serve at %s cannot be reached (%s), so the call is refused.', $this->service, curl_strerror($errno))),
                default => new VetoException(VetoException::UNREACHABLE, sprintf(
                    'veto serve at %s gave no answer (%s), so the call is refused.', $this->service, curl_strerror($errno))),
            };
        }
        return new Reply($status, $contentType, $received, $this->service);
    }

    /**
     * A JSON body of $value. Arguments that JSON cannot hold (a string that
     * is not UTF-8, a float that is not finite, a resource) are refused here.
     */
    public static function encode(mixed $value): string
    {
        try {
            return json_encode($value, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);
        } catch (\JsonException) {
            throw new VetoException(VetoException::CLIENT_FAILED, 'The call cannot be written as JSON (a string that is not UTF-8, a number JSON cannot hold), so it is refused.');
        }
    }
}
