import { Type } from 'typebox'
import { AmountOut } from '../http/schemas.js'

/** A wallet in responses: one currency of an account, amounts as exact decimals. */
export const WalletSchema = Type.Object(
  {
    id: Type.String(),
    ccy: Type.String(),
    amount: AmountOut('Total balance including reserved funds'),
    availableBalance: AmountOut('Balance spendable now'),
    accountId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Wallet',
    examples: [
      {
        id: 'wal_1u8d3k0q6w2e9r5t7y4i0o3p1',
        ccy: 'BTC',
        amount: 0.015,
        availableBalance: 0.0125,
        accountId: 'acc_9jmgaru80ak6i73vn4jq4t12f',
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-02T09:30:00.000Z',
      },
    ],
  },
)

/** An account's information (`GET /api/v2/account/{accountId}`). */
export const AccountSchema = Type.Object(
  {
    id: Type.String(),
    displayName: Type.String(),
    parentId: Type.Union([Type.String(), Type.Null()]),
    tier: Type.Union([Type.Literal('standard'), Type.Literal('premium')], { description: 'Rate-limit tier' }),
    createdAt: Type.Integer({ description: 'epoch ms' }),
  },
  {
    examples: [
      {
        id: 'acc_9jmgaru80ak6i73vn4jq4t12f',
        displayName: 'Example shop',
        parentId: null,
        tier: 'standard',
        createdAt: 1767225600000,
      },
    ],
  },
)
