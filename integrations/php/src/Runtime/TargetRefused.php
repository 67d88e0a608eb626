<?php

declare(strict_types=1);

namespace Veto\Runtime;

/** The call's target could not be resolved: the call is refused. */
final class TargetRefused extends \RuntimeException implements ReasonedException
{
    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }

    public function reason(): string
    {
        return $this->reason;
    }
}
