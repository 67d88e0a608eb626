<?php

declare(strict_types=1);

namespace Veto\Tests;

use PHPUnit\Framework\TestCase;
use Veto\Serve\Reply;
use Veto\Serve\Verdict;
use Veto\Serve\VetoException;

/**
 * The reader of veto's answers, fed mutations of real answers (bytes
 * flipped, inserted, cut; statuses and types changed): it returns a verdict
 * or throws a VetoException, nothing else, and it returns an allow only
 * for a 200 application/json object whose verdict is allow for the call
 * asked about. VETO_PHP_FUZZ_SECONDS runs it longer (a seed of its own each
 * run, printed on failure); by default, a fixed seed and 3000 inputs.
 */
final class ReplyFuzzTest extends TestCase
{
    private const SEEDS = [
        '{"verdict":"allow","call_id":"c1","tool":"Read","run":"r1","target":{"kind":"file","id":"/w/README.md"},"seq":2}',
        '{"verdict":"deny","call_id":"c1","tool":"Read","run":"r1","stage":"rule","rule":"file.credential","reason":"credential_path","risk":"critical","message":"The file_path argument names a file that holds credentials.","advice":{"policy":"builtin.off"},"target":{"kind":"file","id":"/h/.ssh/id_rsa"},"seq":3}',
        '{"verdict":"ask","call_id":"c1","tool":"Bash","run":"r1","stage":"rule","rule":"deploy-needs-person","reason":"deploy_needs_person","risk":"medium","message":"A deploy needs a person\'s approval.","seq":4}',
        '{"verdict":"allow","call_id":"c1","args":{"command":"ls","timeout":{}},"seq":1}',
        '{"verdict":"deny","reason":"state_unavailable","message":"veto cannot use its state: locked.","call_id":"c1"}',
        '{"verdict":"deny","reason":"unauthenticated","message":"No valid token."}',
    ];

    public function testMutatedAnswersAreVerdictsOrRefusals(): void
    {
        $seconds = (float) (getenv('VETO_PHP_FUZZ_SECONDS') ?: 0);
        $seed = $seconds > 0 ? random_int(1, PHP_INT_MAX) : 33;
        mt_srand($seed);
        $until = microtime(true) + $seconds;
        $n = 0;
        $allows = 0;
        while ($seconds > 0 ? microtime(true) < $until : $n < 3000) {
            $n++;
            $body = $this->mutate(self::SEEDS[mt_rand(0, count(self::SEEDS) - 1)]);
            $status = [200, 200, 200, 503, 504, 401, 403, 500, 302, 204][mt_rand(0, 9)];
            $type = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'text/plain', '', 'application/jsonx'][mt_rand(0, 5)];
            $r = new Reply($status, $type, $body, 'http://127.0.0.1:1');
            try {
                $v = Verdict::fromReply($r, 'c1');
            } catch (VetoException $e) {
                $this->assertMatchesRegularExpression('/\A[a-z][a-z0-9_.-]{0,63}\z/', $e->reason(), "seed $seed");
                $this->assertStringNotContainsString("\n", $e->getMessage(), "seed $seed");
                continue;
            } catch (\Throwable $e) {
                $this->fail("seed $seed, input $n: " . get_class($e) . ' from ' . json_encode(['status' => $status, 'type' => $type, 'body' => base64_encode($body)]));
            }
            if ($v->allowed()) {
                $allows++;
                $j = json_decode($body, true, 64);
                $this->assertSame(200, $status, "seed $seed: an allow on another status");
                $this->assertTrue(Reply::isJson($type), "seed $seed: an allow of another type");
                $this->assertIsArray($j, "seed $seed");
                $this->assertSame('allow', $j['verdict'], "seed $seed");
                $this->assertSame('c1', $j['call_id'], "seed $seed");
            } else {
                $this->assertMatchesRegularExpression('/\A[a-z][a-z0-9_.-]{0,63}\z/', $v->reason, "seed $seed");
            }
            $this->assertStringNotContainsString("\n", $v->message, "seed $seed");
        }
        $this->assertGreaterThan(0, $allows, 'some mutations stay allows: the reader is not refusing everything');
    }

    private function mutate(string $s): string
    {
        $k = mt_rand(0, 6);
        for ($i = 0; $i < $k; $i++) {
            $len = strlen($s);
            $at = $len === 0 ? 0 : mt_rand(0, $len - 1);
            switch (mt_rand(0, 6)) {
                case 0:
                    $s = substr($s, 0, $at) . chr(mt_rand(0, 255)) . substr($s, $at + 1);
                    break;
                case 1:
                    $s = substr($s, 0, $at) . substr($s, $at + mt_rand(1, 8));
                    break;
                case 2:
                    $s = substr($s, 0, $at) . ['"', '{', '}', '[', ']', ',', ':', '\\u0000', 'null', '1e999', '-1', "\u{202e}", "\n"][mt_rand(0, 12)] . substr($s, $at);
                    break;
                case 3:
                    $s = substr($s, 0, $at);
                    break;
                case 4:
                    $s = str_replace(['"allow"', '"deny"', '"ask"'], ['"deny"', '"ask"', '"allow"'], $s);
                    break;
                case 5:
                    $s = str_replace('"c1"', ['"c2"', '1', 'null', '""'][mt_rand(0, 3)], $s);
                    break;
                default:
                    $s = preg_replace('/"(\w+)":/', '"$1":"x","$1":', $s, 1) ?? $s;
            }
        }
        return $s;
    }
}
