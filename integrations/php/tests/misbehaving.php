<?php

// A server that answers the way veto serve never should, for the
// fail-closed tests: the router of PHP's built-in server (php -S). The
// first path segment says how it misbehaves; the rest is the API's path.

declare(strict_types=1);

$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH) ?: '/';
$mode = explode('/', trim($path, '/'))[0];
$body = (string) file_get_contents('php://input');
$call = json_decode($body, true);
$id = is_array($call) ? ($call['call_id'] ?? ($call['call']['call_id'] ?? '')) : '';
$allow = json_encode(['verdict' => 'allow', 'call_id' => $id, 'tool' => 'Read', 'run' => 'r']);

switch ($mode) {
    case 'slow':
        // Past the tests' 1 s timeout, and short: the server answers one
        // request at a time, and the next test's request waits for this one.
        usleep(1_500_000);
        header('Content-Type: application/json');
        echo $allow;
        break;
    case 'error500':
        http_response_code(500);
        header('Content-Type: text/html');
        echo '<html>allow</html>';
        break;
    case 'allow503':
        http_response_code(503);
        header('Content-Type: application/json');
        echo $allow;
        break;
    case 'error502json':
        http_response_code(502);
        header('Content-Type: application/json');
        echo '{"verdict":"deny","reason":"bad_gateway","message":"proxy"}';
        break;
    case 'malformed':
        header('Content-Type: application/json');
        echo '{"verdict":"allow","call_id":';
        break;
    case 'texttype':
        header('Content-Type: text/plain');
        echo $allow;
        break;
    case 'nocontenttype':
        header('Content-Type:');
        echo $allow;
        break;
    case 'maybe':
        header('Content-Type: application/json');
        echo json_encode(['verdict' => 'maybe', 'call_id' => $id]);
        break;
    case 'othercall':
        header('Content-Type: application/json');
        echo json_encode(['verdict' => 'allow', 'call_id' => 'another-call']);
        break;
    case 'list':
        header('Content-Type: application/json');
        echo '["allow"]';
        break;
    case 'denynoreason':
        header('Content-Type: application/json');
        echo json_encode(['verdict' => 'deny', 'call_id' => $id, 'reason' => 'Not A Code!']);
        break;
    case 'huge':
        header('Content-Type: application/json');
        echo '{"verdict":"allow","call_id":' . json_encode($id) . ',"message":"' . str_repeat('a', 2 << 20) . '"}';
        break;
    case 'redirect':
        http_response_code(307);
        header('Location: /ok/v1/decide');
        break;
    case 'ok':
        header('Content-Type: application/json');
        echo $allow;
        break;
    case 'resumeexecute':
        // A resume that says execute with a verdict that is not an allow.
        header('Content-Type: application/json');
        echo json_encode(['verdict' => ['verdict' => 'deny', 'call_id' => 'deploy', 'reason' => 'nope'], 'execute' => true]);
        break;
    case 'ask':
        header('Content-Type: application/json');
        if (str_ends_with($path, '/v1/decide')) {
            echo json_encode(['verdict' => 'ask', 'call_id' => $id, 'reason' => 'needs_person', 'message' => 'A person decides.']);
        } else {
            echo json_encode(['suspension' => 'not an object', 'call_id' => $id, 'run' => 'r']);
        }
        break;
    case 'echo':
        // Answers 401 in veto's Error form, quoting what it was sent.
        http_response_code(401);
        header('Content-Type: application/json');
        echo json_encode(['verdict' => 'deny', 'reason' => 'unauthenticated', 'message' => "No\nvalid token." . "\u{202e}"]);
        break;
    default:
        http_response_code(404);
        header('Content-Type: application/json');
        echo '{"verdict":"deny","reason":"not_found","message":"No such route."}';
}
