<?php

declare(strict_types=1);

namespace Veto\Serve;

use Veto\Runtime\Code;
use Veto\Runtime\ReasonedException;

/**
 * veto serve gave no verdict, or refused the request: the call is refused
 * with this stable reason code and sentence. The sentence names the cause
 * and the service's address, never the token, an argument or the reply's
 * text (veto's own refusal sentences aside, which quote nothing either).
 */
final class VetoException extends \RuntimeException implements ReasonedException
{
    /** The service cannot be reached (connection refused, no route, no such host). */
    public const UNREACHABLE = 'veto_unreachable';
    /** The service did not answer within the client's timeout. */
    public const TIMEOUT = 'veto_timeout';
    /** An HTTP status of 5xx without a verdict. */
    public const SERVER_ERROR = 'veto_server_error';
    /** An answer that is not the JSON expected: malformed, another shape, another call's. */
    public const REPLY_INVALID = 'veto_reply_invalid';
    /** An answer that is not application/json. */
    public const CONTENT_TYPE = 'veto_content_type';
    /** An answer larger than the client reads. */
    public const REPLY_TOO_LARGE = 'veto_reply_too_large';
    /** A refusal (4xx) whose reason is not a stable code. */
    public const REFUSED = 'veto_refused';
    /** The request could not be made here: arguments JSON cannot hold, a broken suspension. */
    public const CLIENT_FAILED = 'veto_client_failed';

    public function __construct(private readonly string $reasonCode, string $message, public readonly int $status = 0)
    {
        if (!Code::valid($reasonCode)) {
            throw new \InvalidArgumentException('A reason is a stable code.');
        }
        parent::__construct($message);
    }

    public function reason(): string
    {
        return $this->reasonCode;
    }
}
