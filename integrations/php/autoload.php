<?php

declare(strict_types=1);

// The library's own PSR-4 autoloader, so that no composer is needed at run
// time: require this file, or let composer's autoloader read composer.json.
// Veto\X\Y lives in src/X/Y.php, Veto\Tests\Z in tests/Z.php.
spl_autoload_register(static function (string $class): void {
    foreach (['Veto\\Tests\\' => __DIR__ . '/tests/', 'Veto\\' => __DIR__ . '/src/'] as $prefix => $dir) {
        if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
            continue;
        }
        $rest = substr($class, strlen($prefix));
        if (preg_match('/\A[A-Za-z_][A-Za-z0-9_]*(\\\\[A-Za-z_][A-Za-z0-9_]*)*\z/', $rest) !== 1) {
            return;
        }
        $file = $dir . str_replace('\\', '/', $rest) . '.php';
        if (is_file($file)) {
            require $file;
        }
        return;
    }
});
