/**
 * The error answers of OpenConext-voot, a Spring Boot application: Spring Security's
 * bearer-token refusals (an empty body, the reason in `WWW-Authenticate`) and the JSON
 * error body of its `DefaultErrorController` (Spring Boot's error attributes with the
 * exception's class name and message, without the path).
 *
 * @module
 */
import { jsonAnswer, type Answer } from '../answer.js'

/**
 * The content type of Spring MVC's JSON answers (Jackson): no charset parameter.
 */
export const SPRING_JSON_CONTENT_TYPE = 'application/json'

const RFC6750_ERROR_URI = 'https://tools.ietf.org/html/rfc6750#section-3.1'

/**
 * Why Spring Security refused a request before it reached a controller.
 */
export type BearerRefusal = 'missing' | 'invalid_token' | 'insufficient_scope'

/**
 * Spring Security's refusal: 401 (no token, or one the introspection endpoint says is not
 * active) or 403 (a scope is missing), with an EMPTY body; Spring's challenge carries no
 * realm.
 */
export function bearerRefusal(reason: BearerRefusal): Answer {
  switch (reason) {
    case 'missing':
      return { status: 401, headers: { 'www-authenticate': 'Bearer' }, body: '' }
    case 'invalid_token':
      return {
        status: 401,
        headers: {
          'www-authenticate': `Bearer error="invalid_token", error_description="Provided token isn't active", error_uri="${RFC6750_ERROR_URI}"`,
        },
        body: '',
      }
    case 'insufficient_scope':
      return {
        status: 403,
        headers: {
          'www-authenticate':
            'Bearer error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token.", ' +
            `error_uri="${RFC6750_ERROR_URI}"`,
        },
        body: '',
      }
  }
}

/**
 * What a Spring error body says.
 */
export interface SpringFailure {
  /** The HTTP status sent. */
  readonly status: number
  /** The fully qualified class name of the exception. */
  readonly exception: string
  /** The exception's message; Spring writes "No message available" when it has none. */
  readonly message?: string
  /**
   * The `status` written in the body when it differs from the one sent: OpenConext answers
   * an `IllegalArgumentException` with 400 while the body still says 500.
   */
  readonly bodyStatus?: number
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
}

/**
 * The JSON error answer of OpenConext-voot's `DefaultErrorController`:
 * `{"timestamp","status","error","exception","message"}`, with the timestamp in Jackson's
 * default form (`2026-11-21T12:00:00.000+00:00`).
 */
export function springError(failure: SpringFailure, now: number): Answer {
  const bodyStatus = failure.bodyStatus ?? failure.status
  const body = {
    timestamp: new Date(now).toISOString().replace(/Z$/, '+00:00'),
    status: bodyStatus,
    error: REASONS[bodyStatus] ?? 'Error',
    exception: failure.exception,
    message: failure.message === undefined || failure.message === '' ? 'No message available' : failure.message,
  }
  return jsonAnswer(failure.status, body, { 'content-type': SPRING_JSON_CONTENT_TYPE })
}
