<?php

declare(strict_types=1);

namespace Veto\Tests;

use PHPUnit\Framework\TestCase;
use Veto\Runtime\ToolCall;
use Veto\Runtime\ToolExecutionContext;
use Veto\Runtime\ToolInvocationDecision;
use Veto\Runtime\ToolInvocationHistory;
use Veto\Runtime\ToolInvocationPolicy;
use Veto\Runtime\ToolInvocationSuspension;
use Veto\Serve\VetoGate;
use Veto\Serve\VetoRule;
use Veto\Serve\VetoTargetResolver;

/**
 * The library against a real veto serve: the runtime's policy holds the
 * VetoRule and the VetoTargetResolver on one VetoGate, as a host installs
 * them.
 */
final class VetoServeTest extends TestCase
{
    private static ?VetoServe $veto = null;

    public static function tearDownAfterClass(): void
    {
        self::$veto?->close();
        self::$veto = null;
    }

    private function veto(): VetoServe
    {
        return self::$veto ??= VetoServe::start($this);
    }

    /** @return array{0: ToolInvocationPolicy, 1: VetoRule, 2: VetoGate} */
    private function policy(?string $token = null, ?VetoServe $v = null): array
    {
        $v ??= $this->veto();
        $gate = VetoGate::connect($v->url, $token ?? $v->serviceToken);
        $rule = new VetoRule($gate);
        return [new ToolInvocationPolicy([$rule], [new VetoTargetResolver($gate)]), $rule, $gate];
    }

    private function exec(string $run, bool $fresh = true): ToolExecutionContext
    {
        return new ToolExecutionContext($run, fresh: $fresh, cwd: $this->veto()->project, workspace: $this->veto()->project);
    }

    /** @return list<string> the kinds of a call's events, in order */
    private function kinds(string $run, string $callId): array
    {
        $kinds = [];
        foreach ($this->veto()->events($run) as $e) {
            if (($e['call_id'] ?? '') === $callId) {
                $kinds[] = $e['kind'];
            }
        }
        return $kinds;
    }

    public function testAnAllowedCallRunsAndIsObserved(): void
    {
        [$policy] = $this->policy();
        $exec = $this->exec('php-allow');
        $call = new ToolCall('read-1', 'Read', ['file_path' => $this->veto()->project . '/README.md']);
        $context = $policy->context($call, $exec, new ToolInvocationHistory());
        $this->assertNotInstanceOf(ToolInvocationDecision::class, $context);
        $this->assertSame('file', $context->target?->kind, 'the target is veto\'s');
        $this->assertSame($this->veto()->project . '/README.md', $context->target->identifier);
        $d = $policy->decide($context);
        $this->assertTrue($d->allowed, $d->reason . ': ' . $d->message);
        $this->assertSame('allowed', $d->reason);
        $history = $policy->observe($context, 'succeeded');
        $this->assertTrue($history->complete);
        $this->assertSame('succeeded', $history->entries[0]['outcome']);
        $this->assertSame(['kind' => 'file', 'identifier' => $this->veto()->project . '/README.md'], $history->entries[0]['target']);
        // One decision for the resolver and the rule, then the observation.
        $this->assertSame(['invocation_allowed', 'observation'], $this->kinds('php-allow', 'read-1'));
    }

    public function testACredentialReadIsRefusedWithItsCode(): void
    {
        [$policy] = $this->policy();
        $call = new ToolCall('read-key', 'Read', ['file_path' => $this->veto()->home . '/.ssh/id_rsa']);
        $d = $policy->evaluate($call, $this->exec('php-cred'), new ToolInvocationHistory());
        $this->assertFalse($d->allowed);
        $this->assertSame('credential_path', $d->reason);
        $this->assertSame('veto', $d->ruleIdentifier);
        $this->assertSame('file.credential', $d->detail['veto_rule'] ?? null);
        $this->assertSame('critical', $d->detail['risk'] ?? null);
        $this->assertNull($d->suspension);
        $this->assertStringContainsString('credentials', $d->message);
        $this->assertStringNotContainsString('id_rsa', $d->message, 'the sentence quotes no argument');
        $this->assertSame(['invocation_denied'], $this->kinds('php-cred', 'read-key'));
    }

    public function testAQuestionIsSuspendedAndResumedAfterAPersonsApproval(): void
    {
        [$policy, $rule] = $this->policy();
        $exec = $this->exec('php-ask');
        $call = new ToolCall('deploy-1', 'Bash', ['command' => 'make deploy', 'options' => new \stdClass(), 'n' => 1.0]);
        $context = $policy->context($call, $exec, new ToolInvocationHistory());
        $this->assertNotInstanceOf(ToolInvocationDecision::class, $context);
        $d = $policy->decide($context);
        $this->assertFalse($d->allowed, 'a question refuses the call until a person answers');
        $this->assertSame('deploy_needs_person', $d->reason);
        $this->assertTrue($d->suspended());

        // The host keeps the suspension in its own state, and reads it back.
        $stored = $d->suspension->toJson();
        $s = ToolInvocationSuspension::fromJson($stored);
        $this->assertSame('veto', $s->ruleIdentifier);
        $this->assertSame('deploy-1', $s->callId);
        $this->assertTrue($rule->waiting($s));
        $this->assertFalse($rule->awaitAnswer($s, 0.2, 0.05), 'no one answered yet');

        [$status, $answered] = $this->veto()->answer('php-ask', 'deploy-1', true);
        $this->assertSame(200, $status, json_encode($answered));
        $this->assertFalse($rule->waiting($s));
        $this->assertTrue($rule->awaitAnswer($s, 1));

        $r = $policy->resume($s, $context);
        $this->assertTrue($r->allowed, $r->reason . ': ' . $r->message);
        $this->assertSame('make deploy', $r->arguments['command'] ?? null, 'veto gives the arguments to run with');
        $this->assertSame(
            ['invocation_denied', 'call_suspended', 'approval_granted', 'invocation_allowed'],
            $this->kinds('php-ask', 'deploy-1'),
        );

        // The approval is used up: the same suspension resumed again is a
        // failed call, never a new question.
        $again = $policy->resume($s, $context);
        $this->assertFalse($again->allowed);
        $this->assertSame('deploy_needs_person', $again->reason);
        $this->assertNull($again->suspension);
        $this->assertSame('refused', $again->detail['resume'] ?? null);
    }

    public function testAPersonsRefusalRefusesTheResume(): void
    {
        [$policy, $rule] = $this->policy();
        $exec = $this->exec('php-refuse');
        $call = new ToolCall('deploy-2', 'Bash', ['command' => 'make deploy prod']);
        $d = $policy->evaluate($call, $exec, new ToolInvocationHistory());
        $this->assertTrue($d->suspended());
        [$status] = $this->veto()->answer('php-refuse', 'deploy-2', false);
        $this->assertSame(200, $status);
        $this->assertTrue($rule->awaitAnswer($d->suspension, 1));
        $r = $policy->resume($d->suspension, new \Veto\Runtime\ToolInvocationContext($call, null, $exec, new ToolInvocationHistory()));
        $this->assertFalse($r->allowed);
        $this->assertSame('approval_refused', $r->reason);
    }

    public function testAResumeBeforeTheAnswerIsRefusedAndTheQuestionStays(): void
    {
        [$policy, $rule] = $this->policy();
        $exec = $this->exec('php-early');
        $call = new ToolCall('deploy-4', 'Bash', ['command' => 'make deploy']);
        $context = new \Veto\Runtime\ToolInvocationContext($call, null, $exec, new ToolInvocationHistory());
        $d = $policy->decide($context);
        $this->assertTrue($d->suspended());
        $early = $policy->resume($d->suspension, $context);
        $this->assertFalse($early->allowed, 'no answer, no call');
        $this->assertSame('deploy_needs_person', $early->reason);
        $this->assertNull($early->suspension, 'a refusal at resume, not a new question');
        $this->assertTrue($rule->waiting($d->suspension), 'the question still waits for the person');
        [$status] = $this->veto()->answer('php-early', 'deploy-4', true);
        $this->assertSame(200, $status);
        $this->assertTrue($policy->resume($d->suspension, $context)->allowed);
    }

    public function testAResumeOfAnotherCallIsRefused(): void
    {
        [$policy] = $this->policy();
        $exec = $this->exec('php-other');
        $d = $policy->evaluate(new ToolCall('deploy-3', 'Bash', ['command' => 'make deploy']), $exec, new ToolInvocationHistory());
        $this->assertTrue($d->suspended());
        $other = new \Veto\Runtime\ToolInvocationContext(new ToolCall('other', 'Bash', ['command' => 'make deploy']), null, $exec, new ToolInvocationHistory());
        $r = $policy->resume($d->suspension, $other);
        $this->assertFalse($r->allowed);
        $this->assertSame('suspension_unknown', $r->reason);
    }

    public function testAWrongTokenIsRefusedUnauthenticated(): void
    {
        [$policy] = $this->policy('veto_not-a-token');
        $d = $policy->evaluate(new ToolCall('read-2', 'Read', ['file_path' => $this->veto()->project . '/README.md']), $this->exec('php-tok'), new ToolInvocationHistory());
        $this->assertFalse($d->allowed);
        $this->assertSame('unauthenticated', $d->reason);
        $this->assertSame('target', $d->ruleIdentifier, 'the resolver asked first, and its failure refuses the call');
        $this->assertStringContainsString('HTTP 401', $d->message);
        $this->assertStringNotContainsString('veto_not-a-token', $d->message, 'the token is never in a message');
    }

    public function testAWorkspaceOutsideEveryRootIsRefused(): void
    {
        // A workspace outside every --workspace-root is refused before any rule.
        [$policy] = $this->policy();
        $exec = new ToolExecutionContext('php-ws', fresh: true, cwd: '/', workspace: '/');
        $d = $policy->evaluate(new ToolCall('read-3', 'Read', ['file_path' => '/etc/hostname']), $exec, new ToolInvocationHistory());
        $this->assertFalse($d->allowed);
        $this->assertSame('workspace_refused', $d->reason);
    }

    public function testALockedStateRefusesTheCallWithVetosReason(): void
    {
        [$policy] = $this->policy();
        $exec = $this->exec('php-locked');
        $read = fn (string $id) => new ToolCall($id, 'Read', ['file_path' => $this->veto()->project . '/README.md']);
        $this->assertTrue($policy->evaluate($read('read-l1'), $exec, new ToolInvocationHistory())->allowed);
        $release = $this->veto()->lockState($this);
        try {
            // veto answers 503 (or 504 past its deadline) with a deny: that deny.
            $d = $policy->evaluate($read('read-l2'), $exec, new ToolInvocationHistory());
            // A runtime whose limit is shorter than veto's wait refuses first.
            $quick = new VetoRule(VetoGate::connect($this->veto()->url, $this->veto()->serviceToken, 0.3));
            $slow = $quick->decide(new \Veto\Runtime\ToolInvocationContext($read('read-l4'), null, $exec, new ToolInvocationHistory()));
        } finally {
            $release();
        }
        $this->assertFalse($d->allowed, 'a locked state lets nothing through');
        $this->assertContains($d->reason, ['state_unavailable', 'decision_cancelled'], $d->message);
        $this->assertFalse($slow->allowed);
        $this->assertSame('veto_timeout', $slow->reason, $slow->message);
        $this->assertStringContainsString('did not answer within 0.3 s', $slow->message);
        $again = $policy->evaluate($read('read-l3'), $exec, new ToolInvocationHistory());
        $this->assertTrue($again->allowed, 'released, veto decides again: ' . $again->reason . ': ' . $again->message);
    }

    public function testVetoStoppedMidTestRefusesTheCall(): void
    {
        $v = VetoServe::start($this);
        try {
            [$policy, $rule] = $this->policy(null, $v);
            $exec = new ToolExecutionContext('php-stop', fresh: true, cwd: $v->project, workspace: $v->project);
            $read = new ToolCall('read-a', 'Read', ['file_path' => $v->project . '/README.md']);
            $this->assertTrue($policy->evaluate($read, $exec, new ToolInvocationHistory())->allowed);
            $ask = $policy->evaluate(new ToolCall('deploy-a', 'Bash', ['command' => 'make deploy']), $exec, new ToolInvocationHistory());
            $this->assertTrue($ask->suspended());

            $v->stop();

            $d = $policy->evaluate(new ToolCall('read-b', 'Read', ['file_path' => $v->project . '/README.md']), $exec, new ToolInvocationHistory());
            $this->assertFalse($d->allowed, 'no veto, no call');
            $this->assertSame('veto_unreachable', $d->reason);
            $this->assertStringContainsString($v->url, $d->message);
            $this->assertStringContainsString('cannot be reached', $d->message);

            // The rule alone (no resolver before it) refuses the same way.
            $ctx = new \Veto\Runtime\ToolInvocationContext($read, null, $exec, new ToolInvocationHistory());
            $this->assertSame('veto_unreachable', $rule->decide($ctx)->reason);

            // A resume cannot ask veto: refused.
            $r = $policy->resume($ask->suspension, new \Veto\Runtime\ToolInvocationContext(
                new ToolCall('deploy-a', 'Bash', ['command' => 'make deploy']), null, $exec, new ToolInvocationHistory()));
            $this->assertFalse($r->allowed);
            $this->assertSame('veto_unreachable', $r->reason);

            // An observation veto did not record leaves the history unproved.
            $h = $policy->observe($ctx, 'succeeded');
            $this->assertFalse($h->complete);
            $this->expectException(\Veto\Serve\VetoException::class);
            $rule->waiting($ask->suspension);
        } finally {
            $v->close();
        }
    }
}
