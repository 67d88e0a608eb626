<?php

declare(strict_types=1);

require __DIR__ . '/../autoload.php';

error_reporting(E_ALL);
set_error_handler(static function (int $no, string $msg, string $file, int $line): bool {
    if ((error_reporting() & $no) === 0) {
        return false; // silenced with @, on purpose
    }
    throw new \ErrorException($msg, 0, $no, $file, $line);
});
