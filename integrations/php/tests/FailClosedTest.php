<?php

declare(strict_types=1);

namespace Veto\Tests;

use PHPUnit\Framework\TestCase;
use Veto\Runtime\ToolCall;
use Veto\Runtime\ToolExecutionContext;
use Veto\Runtime\ToolInvocationContext;
use Veto\Runtime\ToolInvocationHistory;
use Veto\Runtime\ToolInvocationPolicy;
use Veto\Runtime\ToolInvocationSuspension;
use Veto\Serve\Client;
use Veto\Serve\VetoGate;
use Veto\Serve\VetoRule;
use Veto\Serve\VetoTargetResolver;

/**
 * Every way veto serve can fail to answer refuses the call, with a reason
 * naming the cause: a server that misbehaves (PHP's built-in server with
 * tests/misbehaving.php), and an address where nothing listens.
 */
final class FailClosedTest extends TestCase
{
    /** @var resource|null */
    private static $server = null;
    private static string $url = '';
    private const TOKEN = 'veto_CANARY-TOKEN-SECRET';

    public static function setUpBeforeClass(): void
    {
        $port = self::freePort();
        self::$server = proc_open([PHP_BINARY, '-S', '127.0.0.1:' . $port, __DIR__ . '/misbehaving.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::$url = 'http://127.0.0.1:' . $port;
        $until = microtime(true) + 10;
        while (microtime(true) < $until) {
            $s = @fsockopen('127.0.0.1', $port, $errno, $errstr, 0.2);
            if ($s !== false) {
                fclose($s);
                return;
            }
            usleep(50_000);
        }
        self::tearDownAfterClass();
        throw new \RuntimeException('the misbehaving server did not start');
    }

    public static function tearDownAfterClass(): void
    {
        if (self::$server !== null) {
            proc_terminate(self::$server, 15);
            proc_close(self::$server); // waits for it to end
            self::$server = null;
        }
    }

    private static function freePort(): int
    {
        $s = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        $name = stream_socket_get_name($s, false);
        fclose($s);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    private static function exec(): ToolExecutionContext
    {
        return new ToolExecutionContext('r', fresh: true);
    }

    private static function read(): ToolCall
    {
        return new ToolCall('read-1', 'Read', ['file_path' => '/work/CANARY-ARGUMENT']);
    }

    /** @return array<string, array{0: string, 1: string, 2: string}> */
    public static function failures(): array
    {
        return [
            'a timeout' => ['slow', 'veto_timeout', 'did not answer within 1.0 s'],
            'a 500 with a page' => ['error500', 'veto_server_error', 'HTTP 500'],
            'an allow with a 503' => ['allow503', 'veto_reply_invalid', 'not a refusal'],
            'a 502 in the Error form' => ['error502json', 'veto_server_error', 'HTTP 502'],
            'malformed JSON' => ['malformed', 'veto_reply_invalid', 'not valid JSON'],
            'text/plain' => ['texttype', 'veto_content_type', 'not application/json'],
            'no Content-Type' => ['nocontenttype', 'veto_content_type', 'not application/json'],
            'an unknown verdict' => ['maybe', 'veto_reply_invalid', 'holds no verdict'],
            'another call\'s verdict' => ['othercall', 'veto_reply_invalid', 'another call'],
            'a JSON list' => ['list', 'veto_reply_invalid', 'not a JSON object'],
            'a deny without a code' => ['denynoreason', 'veto_reply_invalid', 'stable reason code'],
            'a reply too large' => ['huge', 'veto_reply_too_large', 'more than'],
            'a redirect' => ['redirect', 'veto_reply_invalid', 'HTTP 307'],
            'a 404' => ['nothing-here', 'not_found', 'HTTP 404'],
        ];
    }

    /** @dataProvider failures */
    public function testAFailureRefusesTheCall(string $mode, string $reason, string $says): void
    {
        $gate = new VetoGate(new Client(self::$url . '/' . $mode, self::TOKEN, 1.0));
        $rule = new VetoRule($gate);
        $policy = new ToolInvocationPolicy([$rule], [new VetoTargetResolver($gate)]);
        $d = $policy->evaluate(self::read(), self::exec(), new ToolInvocationHistory());
        $this->assertFalse($d->allowed, $mode . ' let the call through');
        $this->assertSame($reason, $d->reason, $d->message);
        $this->assertStringContainsString($says, $d->message);
        $this->assertStringContainsString('127.0.0.1', $d->message, 'the message names the service');
        $this->assertStringNotContainsString('CANARY', $d->message, 'no token, no argument');
        // The rule on its own refuses the same way.
        $d = $rule->decide(new ToolInvocationContext(self::read(), null, self::exec(), new ToolInvocationHistory()));
        $this->assertFalse($d->allowed);
        $this->assertSame($reason, $d->reason);
    }

    public function testTheHappyPathOfTheSameServerAllows(): void
    {
        // The control: the same server's well-formed allow is an allow, so
        // the refusals above are the failures', not the setup's.
        $gate = new VetoGate(new Client(self::$url . '/ok', self::TOKEN, 1.0));
        $d = (new ToolInvocationPolicy([new VetoRule($gate)], [new VetoTargetResolver($gate)]))->evaluate(self::read(), self::exec(), new ToolInvocationHistory());
        $this->assertTrue($d->allowed, $d->message);
    }

    public function testNothingListeningRefusesTheCall(): void
    {
        $rule = new VetoRule(new VetoGate(new Client('http://127.0.0.1:' . self::freePort(), self::TOKEN, 1.0)));
        $d = $rule->decide(new ToolInvocationContext(self::read(), null, self::exec(), new ToolInvocationHistory()));
        $this->assertFalse($d->allowed);
        $this->assertSame('veto_unreachable', $d->reason);
        $this->assertStringContainsString('cannot be reached', $d->message);
    }

    public function testAQuestionThatCannotBeParkedIsRefused(): void
    {
        $rule = new VetoRule(new VetoGate(new Client(self::$url . '/ask', self::TOKEN, 1.0)));
        $d = $rule->decide(new ToolInvocationContext(self::read(), null, self::exec(), new ToolInvocationHistory()));
        $this->assertFalse($d->allowed);
        $this->assertNull($d->suspension);
        $this->assertSame('veto_reply_invalid', $d->reason);
        $this->assertStringContainsString('needs_person', $d->message);
    }

    public function testAResumeThatSaysExecuteWithoutAnAllowIsRefused(): void
    {
        $rule = new VetoRule(new VetoGate(new Client(self::$url . '/resumeexecute', self::TOKEN, 1.0)));
        $s = new ToolInvocationSuspension('veto', 'approval', 'r', 'deploy', 'Bash', 'needs_person', '', 1, '{"v":1}');
        $call = new ToolCall('deploy', 'Bash', ['command' => 'make deploy']);
        $d = $rule->resume($s, new ToolInvocationContext($call, null, self::exec(), new ToolInvocationHistory()));
        $this->assertFalse($d->allowed);
        $this->assertSame('nope', $d->reason);
    }

    public function testVetosOwnRefusalSentenceIsCleaned(): void
    {
        $rule = new VetoRule(new VetoGate(new Client(self::$url . '/echo', self::TOKEN, 1.0)));
        $d = $rule->decide(new ToolInvocationContext(self::read(), null, self::exec(), new ToolInvocationHistory()));
        $this->assertSame('unauthenticated', $d->reason);
        $this->assertStringNotContainsString("\n", $d->message);
        $this->assertStringNotContainsString("\u{202e}", $d->message);
    }

    public function testArgumentsJSONCannotHoldAreRefusedHere(): void
    {
        $rule = new VetoRule(new VetoGate(new Client(self::$url . '/ok', self::TOKEN, 1.0)));
        foreach ([['file_path' => "\xff\xfe"], ['n' => NAN], ['a', 'b']] as $args) {
            $d = $rule->decide(new ToolInvocationContext(new ToolCall('c', 'Read', $args), null, self::exec(), new ToolInvocationHistory()));
            $this->assertFalse($d->allowed);
            $this->assertSame('veto_client_failed', $d->reason);
        }
    }

    public function testTheTokenIsNotShownNorStored(): void
    {
        $gate = new VetoGate(new Client(self::$url . '/ok', self::TOKEN, 1.0));
        $this->assertStringNotContainsString('CANARY', print_r($gate, true));
        $this->assertStringNotContainsString('CANARY', var_export(print_r($gate->client(), true), true));
        $this->expectException(\LogicException::class);
        serialize($gate);
    }

    public function testADamagedSuspensionIsRefused(): void
    {
        foreach (['', 'null', '{"v":2}', '{"v":1,"rule":"veto"}', '[]'] as $stored) {
            try {
                ToolInvocationSuspension::fromJson($stored);
                $this->fail('a damaged suspension was read: ' . $stored);
            } catch (\InvalidArgumentException) {
                $this->addToAssertionCount(1);
            }
        }
    }

    public function testTwoResolversClaimingACallRefuseIt(): void
    {
        $gate = new VetoGate(new Client(self::$url . '/ok', self::TOKEN, 1.0));
        $fixed = new class implements \Veto\Runtime\ToolTargetResolverInterface {
            public function resolve(ToolCall $call, ToolExecutionContext $context): ?\Veto\Runtime\ToolInvocationTarget
            {
                return new \Veto\Runtime\ToolInvocationTarget('file', '/a');
            }
        };
        $throws = new class implements \Veto\Runtime\ToolTargetResolverInterface {
            public function resolve(ToolCall $call, ToolExecutionContext $context): ?\Veto\Runtime\ToolInvocationTarget
            {
                throw new \RuntimeException('CANARY-EXCEPTION-TEXT');
            }
        };
        $p = new ToolInvocationPolicy([new VetoRule($gate)], [$fixed, clone $fixed]);
        $this->assertSame('target_ambiguous', $p->evaluate(self::read(), self::exec(), new ToolInvocationHistory())->reason);
        $d = (new ToolInvocationPolicy([new VetoRule($gate)], [$throws]))->evaluate(self::read(), self::exec(), new ToolInvocationHistory());
        $this->assertSame('target_unresolvable', $d->reason);
        $this->assertStringNotContainsString('CANARY', $d->message, 'an exception\'s text goes nowhere');
    }

    public function testARuleNeedingHistoryIsRefusedWithoutIt(): void
    {
        $needs = new class implements \Veto\Runtime\ToolInvocationRuleInterface {
            public function identifier(): string
            {
                return 'needs-history';
            }

            public function requiresCompleteHistory(): bool
            {
                return true;
            }

            public function decide(ToolInvocationContext $context): \Veto\Runtime\ToolInvocationDecision
            {
                return \Veto\Runtime\ToolInvocationDecision::allow();
            }
        };
        $p = new ToolInvocationPolicy([$needs]);
        $this->assertTrue($p->evaluate(self::read(), self::exec(), new ToolInvocationHistory())->allowed);
        $d = $p->evaluate(self::read(), self::exec(), ToolInvocationHistory::incomplete());
        $this->assertSame('history_incomplete', $d->reason);
        $this->assertSame('needs-history', $d->ruleIdentifier);
    }
}
