import { Type, type TSchema } from 'typebox'

/** The contract's error body, referenced by every route's documented error answers. */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'A stable machine-readable code' }),
    message: Type.String({ description: 'A sentence for a person' }),
    details: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String(),
          issue: Type.String(),
          // limit_exceeded (contract section 11, docs/limits.md): which limit, what is still allowed
          // (exact decimal text in ccy, or a count), and when its window frees up (epoch ms).
          limit: Type.Optional(Type.String()),
          ccy: Type.Optional(Type.String()),
          remaining: Type.Optional(Type.String()),
          resetsAt: Type.Optional(Type.Integer()),
        }),
        {
          description: 'Per-field problems',
        },
      ),
    ),
  },
  { $id: 'ErrorBody', title: 'Error' },
)

/** An amount in a response: a JSON number written as exact decimal text (never an exponent). */
export const AmountOut = (description = 'Amount in the currency unit (BTC for BTC), exact decimal') =>
  Type.Number({ description })

/** An amount in a request: a JSON number or a decimal string. */
export const AmountIn = (description: string) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 64 })], { description })

/** Documented error answers for a route: each status refers to the shared error body. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const s of statuses) out[s] = Type.Ref('ErrorBody')
  return out
}

export const BEARER = [{ bearerAuth: [] as string[] }]
