import { Type } from 'typebox'
import { USERNAME_PATTERN } from './names.js'

/** The wire shapes of the account's Lightning Address (routes.ts; the SDK takes its types from here). */

export const LightningAddressBody = Type.Object(
  {
    username: Type.String({
      minLength: 1,
      maxLength: 64,
      description: `LUD-16 username, ${USERNAME_PATTERN}`,
    }),
    creditCcy: Type.String({ pattern: '^[A-Z]{3,5}$', description: 'The wallet currency payments credit' }),
  },
  { examples: [{ username: 'alice', creditCcy: 'BTC' }] },
)

const EXAMPLE = {
  username: 'alice',
  address: 'alice@pay.example.com',
  accountId: 'acc_01J9Z3',
  creditCcy: 'BTC',
  lnurl: 'LNURL1DP68GURN8GHJ7URP0YHX27RPD4CXCEFWVDHK6TEWWAJKCMPDDDHX7AMW9AKXUATJD3CZ7CTVD93K2ME3CYY',
  payPageUrl: 'https://pay.example.com/pay/ln/alice',
  createdAt: '2026-11-24T09:00:00.000Z',
  updatedAt: '2026-11-24T09:00:00.000Z',
}

export const LightningAddressSchema = Type.Object(
  {
    username: Type.String(),
    address: Type.Union([Type.String(), Type.Null()], {
      description:
        'username@domain, what a payer types (LUD-16). null when PUBLIC_BASE_URL gives no address a wallet can use: it must be https (http on .onion) with no port and no path, on a domain name; the lnurl is given always.',
    }),
    accountId: Type.String(),
    creditCcy: Type.String({ description: 'The wallet payments are credited to' }),
    lnurl: Type.String({ description: 'LUD-01 bech32 LNURL of the address, upper case (for a QR code)' }),
    payPageUrl: Type.String({ description: 'The hosted page with the QR codes' }),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { examples: [EXAMPLE] },
)
