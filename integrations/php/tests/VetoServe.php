<?php

declare(strict_types=1);

namespace Veto\Tests;

use PHPUnit\Framework\TestCase;

/**
 * A real veto serve for a test: the veto program named by VETO_BIN (built
 * by integrations/php/php_test.go), a throw-away HOME with an SSH key and a
 * project, a SQLite state of its own, a service's token and a person's,
 * listening on a free port of 127.0.0.1.
 */
final class VetoServe
{
    /** The policy served: the built-in default, and a deploy asks a person. */
    public const POLICY = <<<'YAML'
rules:
  - id: deploy-needs-person
    match: {tool: Bash}
    ask: 'args.command.startsWith("make deploy")'
    reason: deploy_needs_person
    message: A deploy needs a person's approval.

YAML;

    public string $url = '';
    public readonly string $dir;
    public readonly string $home;
    public readonly string $project;
    public readonly string $state;
    public readonly string $serviceToken;
    public readonly string $personToken;

    /** @var resource|null */
    private $proc = null;

    private function __construct(private readonly string $bin)
    {
        $this->dir = self::tempDir();
        $this->home = $this->dir . '/home';
        $this->project = $this->home . '/project';
        $this->state = $this->dir . '/state/veto.db';
        foreach ([$this->home . '/.ssh', $this->project, dirname($this->state)] as $d) {
            mkdir($d, 0o700, true);
        }
        file_put_contents($this->home . '/.ssh/id_rsa', "CANARY-SSH-KEY\n");
        file_put_contents($this->project . '/README.md', "read me\n");
        file_put_contents($this->dir . '/veto.yaml', self::POLICY);
        $this->serviceToken = $this->veto(['token', 'create', '--actor', 'service:php-runtime', '--state', $this->state]);
        $this->personToken = $this->veto(['token', 'create', '--actor', 'user:ann', '--state', $this->state]);
    }

    /** Starts one, or skips the test when there is no veto to run (fails under CI). */
    public static function start(TestCase $t): self
    {
        $bin = getenv('VETO_BIN');
        if (!is_string($bin) || $bin === '' || !is_executable($bin)) {
            if (getenv('CI') !== false && getenv('CI') !== '') {
                $t->fail('VETO_BIN names no veto program (integrations/php/php_test.go sets it)');
            }
            $t->markTestSkipped('VETO_BIN names no veto program: run go test ./integrations/php');
        }
        $s = new self($bin);
        $s->serve();
        return $s;
    }

    /** The environment veto runs in: the throw-away home, nothing else of ours. */
    private function env(): array
    {
        return [
            'HOME' => $this->home,
            'PATH' => getenv('PATH') ?: '/usr/bin:/bin',
            'XDG_CONFIG_HOME' => $this->home . '/.config',
            'XDG_STATE_HOME' => $this->home . '/.state',
            'VETO_MANAGED_POLICY' => $this->dir . '/no-managed.yaml',
        ];
    }

    /** Runs a veto command and returns its stdout, trimmed. */
    public function veto(array $args): string
    {
        $p = proc_open([$this->bin, ...$args], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $this->dir, $this->env());
        if (!is_resource($p)) {
            throw new \RuntimeException('veto could not be started');
        }
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($p);
        if ($code !== 0) {
            throw new \RuntimeException('veto ' . $args[0] . ' exited ' . $code . ': ' . $err);
        }
        return trim((string) $out);
    }

    private function serve(): void
    {
        $log = $this->dir . '/serve.err';
        $this->proc = proc_open([$this->bin, 'serve', '--listen', '127.0.0.1:0', '--state', $this->state,
            '--policy', $this->dir . '/veto.yaml', '--workspace-root', $this->home],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $this->dir . '/serve.out', 'w'], 2 => ['file', $log, 'w']],
            $pipes, $this->dir, $this->env());
        if (!is_resource($this->proc)) {
            throw new \RuntimeException('veto serve could not be started');
        }
        $until = microtime(true) + 30;
        while (microtime(true) < $until) {
            $text = (string) @file_get_contents($log);
            if (preg_match('~veto serve: listening on (http://127\.0\.0\.1:\d+)~', $text, $m) === 1) {
                $this->url = $m[1];
                return;
            }
            if (!proc_get_status($this->proc)['running']) {
                throw new \RuntimeException('veto serve exited: ' . $text);
            }
            usleep(50_000);
        }
        throw new \RuntimeException('veto serve did not say where it listens');
    }

    /** Stops veto serve (SIGTERM, then SIGKILL) and waits for it to end. */
    public function stop(): void
    {
        if ($this->proc === null) {
            return;
        }
        proc_terminate($this->proc, 15);
        $until = microtime(true) + 10;
        while (proc_get_status($this->proc)['running'] && microtime(true) < $until) {
            usleep(20_000);
        }
        if (proc_get_status($this->proc)['running']) {
            proc_terminate($this->proc, 9);
        }
        proc_close($this->proc);
        $this->proc = null;
    }

    /** Stops it and removes its files. */
    public function close(): void
    {
        $this->stop();
        self::remove($this->dir);
    }

    /**
     * A request as a person or the runtime makes it, outside the library:
     * the status and the decoded body.
     *
     * @return array{0: int, 1: array<string, mixed>}
     */
    public function http(string $method, string $path, string $token, ?array $body = null): array
    {
        $h = curl_init($this->url . $path);
        $headers = ['Authorization: Bearer ' . $token];
        curl_setopt_array($h, [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 10, CURLOPT_PROXY => '']);
        if ($body !== null) {
            $headers[] = 'Content-Type: application/json';
            curl_setopt($h, CURLOPT_POSTFIELDS, json_encode($body, JSON_THROW_ON_ERROR));
        }
        curl_setopt($h, CURLOPT_HTTPHEADER, $headers);
        $out = curl_exec($h);
        $status = (int) curl_getinfo($h, CURLINFO_RESPONSE_CODE);
        curl_close($h);
        $j = is_string($out) ? json_decode($out, true) : null;
        return [$status, is_array($j) ? $j : []];
    }

    /** The run's events, as a person reads them. @return list<array<string, mixed>> */
    public function events(string $run): array
    {
        [$status, $j] = $this->http('GET', '/v1/runs/' . rawurlencode($run) . '/events', $this->personToken);
        return $status === 200 ? $j['events'] : [];
    }

    /**
     * A person's answer through veto's API, as the page posts it: the
     * question's argument hash read from the list of waiting calls.
     *
     * @return array{0: int, 1: array<string, mixed>}
     */
    public function answer(string $run, string $callId, bool $approve): array
    {
        [, $list] = $this->http('GET', '/v1/approvals?run=' . rawurlencode($run), $this->personToken);
        $hash = '';
        foreach ($list['pending'] ?? [] as $q) {
            if ($q['call_id'] === $callId) {
                $hash = $q['args_hash'];
            }
        }
        return $this->http('POST', '/v1/approvals/' . rawurlencode($run) . '/' . rawurlencode($callId), $this->personToken,
            ['approve' => $approve, 'args_hash' => $hash, 'ttl' => '5m']);
    }

    /**
     * Holds an exclusive lock on veto serve's SQLite state (Debian's
     * sqlite3, BEGIN EXCLUSIVE) until the returned function is called.
     *
     * @return callable(): void
     */
    public function lockState(TestCase $t): callable
    {
        $sqlite = trim((string) shell_exec('command -v sqlite3'));
        if ($sqlite === '') {
            $t->fail('sqlite3 is not installed (Debian: apt-get install sqlite3; .ci/run does)');
        }
        $p = proc_open([$sqlite, $this->state], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        if (!is_resource($p)) {
            throw new \RuntimeException('sqlite3 could not be started');
        }
        fwrite($pipes[0], "BEGIN EXCLUSIVE;\nSELECT 'held';\n");
        fflush($pipes[0]);
        $line = fgets($pipes[1]);
        if (trim((string) $line) !== 'held') {
            throw new \RuntimeException('sqlite3 did not take the lock');
        }
        return static function () use ($p, $pipes): void {
            fwrite($pipes[0], "ROLLBACK;\n.quit\n");
            fclose($pipes[0]);
            fclose($pipes[1]);
            proc_close($p);
        };
    }

    /** The text of everything veto serve and its state hold, for canaries. */
    public function logs(): string
    {
        return (string) @file_get_contents($this->dir . '/serve.err') . (string) @file_get_contents($this->dir . '/serve.out');
    }

    public static function tempDir(): string
    {
        $d = sys_get_temp_dir() . '/veto-php-' . bin2hex(random_bytes(6));
        mkdir($d, 0o700);
        return $d;
    }

    public static function remove(string $dir): void
    {
        if (!is_dir($dir) || is_link($dir)) {
            @unlink($dir);
            return;
        }
        foreach (scandir($dir) ?: [] as $f) {
            if ($f !== '.' && $f !== '..') {
                self::remove($dir . '/' . $f);
            }
        }
        @rmdir($dir);
    }
}
