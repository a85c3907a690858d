import { flowRefusal, type FlowRefusal } from '../transactions/errors.js'
import { commentChars, hasUnsafeCommentChar } from './comment-text.js'

/**
 * What a Lightning receive's `sourceReq.reqDetails` may carry besides nothing: a `descriptionHash`
 * (64 hex, the SHA-256 the invoice commits to in its `h` field instead of a description; LNURL-pay
 * sets it to the hash of its metadata, LUD-06) and the payer's `comment` (LUD-12). Both are kept
 * in the transaction's source details, so reads and webhooks show them.
 */
export interface LnReceiveExtras {
  descriptionHash?: string
  comment?: string
}

/** LUD-12 asks services to keep `commentAllowed` small; no receive stores more than this. */
export const RECEIVE_COMMENT_CHARS_MAX = 1_000

export type LnReceiveDetailsCode = 'description_hash_invalid' | 'comment_invalid'

export type LnReceiveDetailsError = FlowRefusal<LnReceiveDetailsCode>

const CONTRACT = { description_hash_invalid: 'invalid_request', comment_invalid: 'invalid_request' } as const

/** The extras of a receive's request details, checked; other keys are ignored as before. */
export function lnReceiveExtras(
  reqDetails: Record<string, unknown> | undefined,
): LnReceiveExtras | LnReceiveDetailsError {
  const out: LnReceiveExtras = {}
  const hash = reqDetails?.descriptionHash
  if (hash !== undefined) {
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/i.test(hash))
      return refusal('description_hash_invalid', 'descriptionHash', 'must be 64 hexadecimal characters')
    out.descriptionHash = hash.toLowerCase()
  }
  const comment = reqDetails?.comment
  if (comment !== undefined) {
    if (
      typeof comment !== 'string' ||
      commentChars(comment) > RECEIVE_COMMENT_CHARS_MAX ||
      hasUnsafeCommentChar(comment)
    )
      return refusal(
        'comment_invalid',
        'comment',
        `must be text of at most ${RECEIVE_COMMENT_CHARS_MAX} characters without control or bidirectional-override characters`,
      )
    out.comment = comment
  }
  return out
}

const refusal = (code: LnReceiveDetailsCode, field: string, issue: string): LnReceiveDetailsError =>
  flowRefusal(CONTRACT, code, [{ field: `sourceReq.reqDetails.${field}`, issue }])
