<?php

declare(strict_types=1);

namespace Veto\Runtime;

/**
 * Stable codes: rule identifiers and reason codes, [a-z][a-z0-9_.-]*, at
 * most 64 ASCII characters.
 */
final class Code
{
    public const PATTERN = '/\A[a-z][a-z0-9_.-]{0,63}\z/';

    public static function valid(string $code): bool
    {
        return preg_match(self::PATTERN, $code) === 1;
    }

    private function __construct()
    {
    }
}
