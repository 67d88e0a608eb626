<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * An exception with a stable reason code, whose message is a fixed
 * sentence that quotes nothing of the call: the policy refuses the call
 * with them instead of its generic code.
 */
interface ReasonedException extends \Throwable
{
    public function reason(): string;
}
