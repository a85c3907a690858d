import { markup, type SafeHtml } from '../pages/escape.js'
import { CSRF_FORM_FIELD } from '../operators/guard.js'

/**
 * CSRF in the console's forms. A cookie session's state changes need its CSRF token (derived from
 * the session, src/operators/service.ts); scripts send it as the `X-CSRF-Token` header, and the
 * console's plain HTML forms as this hidden field. The admin guard accepts either and compares it
 * in constant time (src/operators/guard.ts).
 */
export { CSRF_FORM_FIELD as CSRF_FIELD } from '../operators/guard.js'

export function csrfField(token: string): SafeHtml {
  return markup`<input type="hidden" name="${CSRF_FORM_FIELD}" value="${token}">`
}
