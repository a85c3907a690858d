import { Type } from 'typebox'

/** The answer of the token exchange. */
export const TokenResponseSchema = Type.Object(
  {
    accessToken: Type.String({ description: 'JWT; send it as Authorization: Bearer <accessToken>' }),
    expiredAt: Type.Integer({ description: 'Expiry, epoch ms' }),
    accountId: Type.String(),
  },
  {
    examples: [
      { accessToken: 'eyJhbGciOi...', expiredAt: 1767225600000, accountId: 'acc_9jmgaru80ak6i73vn4jq4t12f' },
    ],
  },
)
