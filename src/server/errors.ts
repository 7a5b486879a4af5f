// The server's errors: an `ApiError` carries the HTTP status and the message a client sees. Anything
// else thrown by a handler becomes a 500 with a generic message; stacks are logged, never sent.

export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 408 | 413 | 415 | 422 | 500 | 503,
    message: string,
    /** The client's fault worth one line in the server's log (a cut or stalled upload, a client gone): logged without a stack. */
    readonly logged = false,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The JSON body of every error response. */
export interface ErrorBody {
  status: number;
  error: string;
}

export function errorBody(status: number, error: string): ErrorBody {
  return { status, error };
}
