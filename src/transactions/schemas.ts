import { Type } from 'typebox'
import { AmountIn, AmountOut } from '../http/schemas.js'

// Free text may hold any printable character, but no control characters.
const TEXT = '^[^\\u0000-\\u001f\\u007f]*$'

const SideIn = Type.Object({
  ccy: Type.String({ pattern: '^[A-Z]{3,5}$', description: 'Currency code: BTC, USDT, VND, USD, CAD, ...' }),
  method: Type.String({
    minLength: 1,
    maxLength: 32,
    description: 'svcpay, lightning, on-chain, tron, eth, vnd-instant',
  }),
  amtRequested: Type.Optional(AmountIn('Amount in the currency unit (BTC for BTC); on one side only')),
  reqDetails: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'Method-specific details' }),
  ),
  // The fields inside kyc and sourceOfFunds are optional to the schema so that the payout flow can
  // answer a missing one with the contract's kyc_required, naming the field (src/fiat/kyc.ts).
  kyc: Type.Optional(
    Type.Object(
      {
        type: Type.Optional(Type.String({ description: 'individual or business' })),
        details: Type.Optional(
          Type.Object({
            legalFullName: Type.Optional(Type.String({ description: '1-140 characters' })),
            countryCode: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2' })),
          }),
        ),
      },
      {
        description: 'Fiat payouts only; type, details.legalFullName, details.countryCode required there',
      },
    ),
  ),
})

export const CreateBodySchema = Type.Object(
  {
    extRefId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: TEXT })),
    note: Type.Optional(Type.String({ maxLength: 1000, pattern: TEXT })),
    deductNetworkFeesFromDest: Type.Optional(Type.Boolean()),
    sourceReq: SideIn,
    destReq: SideIn,
    sourceOfFunds: Type.Optional(
      Type.Object(
        {
          purpose: Type.Optional(Type.Integer()),
          source: Type.Optional(Type.Integer()),
          relationship: Type.Optional(Type.Integer()),
        },
        {
          description: 'Fiat payouts only (all three required); see GET /api/v2/fiat/source-of-funds-codes',
        },
      ),
    ),
  },
  {
    examples: [
      {
        extRefId: 'order-1001',
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: 0.001, reqDetails: {} },
        destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      },
      {
        extRefId: 'order-1002',
        sourceReq: { ccy: 'VND', method: 'vnd-instant', reqDetails: {} },
        destReq: { ccy: 'VND', method: 'svcpay', amtRequested: 500000, reqDetails: {} },
      },
    ],
  },
)

const SideOut = Type.Object({
  ccy: Type.String(),
  method: Type.String(),
  amtRequested: AmountOut('Amount requested or computed by the quote'),
  amtSettled: Type.Union([AmountOut('Amount actually settled'), Type.Null()]),
  svcpayFees: AmountOut('Service fee (source side)'),
  networkFees: AmountOut('Network fee (source side)'),
  reqStatus: Type.String({
    description: "'0' pending, '1' in progress, '2' completed, '3' failed/expired/cancelled",
  }),
  expiresAt: Type.Integer(),
  createAt: Type.Integer(),
  updatedAt: Type.Integer(),
  reqDetails: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'Method-specific output: paymentRequest and invoicePageUrl (Lightning receive), address, amount, invoice, invoicePageUrl and expiredAt (on-chain receive), bankBin, bankName, bankAcctNum, accountName, amount, memo, vietQr and invoicePageUrl (VND receive over VietQR), txid, preimage, txHash or bankRef once sent',
  }),
  kyc: Type.Optional(
    Type.Object(
      {
        type: Type.String(),
        details: Type.Object({ legalFullName: Type.String(), countryCode: Type.String() }),
      },
      { description: 'The beneficiary of a fiat payout (destination side only)' },
    ),
  ),
})

export const TransactionSchema = Type.Object(
  {
    txnId: Type.String(),
    accountId: Type.String(),
    accountDisplayName: Type.String(),
    extRefId: Type.Optional(Type.String()),
    txnState: Type.String({
      description:
        "quoted, srcintent, srccreated, processing (awaiting an operator's approval), destsent, completed, expired, failed, usercanceled, rejected, error",
    }),
    msg: Type.String({ description: "'' or the reason once failed, rejected, expired or in error" }),
    note: Type.Optional(Type.String()),
    deductNetworkFeesFromDest: Type.Boolean(),
    sourceReq: SideOut,
    destReq: SideOut,
    sourceOfFunds: Type.Optional(
      Type.Object(
        { purpose: Type.Integer(), source: Type.Integer(), relationship: Type.Integer() },
        { description: 'Fiat payouts only, as sent' },
      ),
    ),
    fxRate: Type.Number({ description: 'Units of destination currency per unit of source currency' }),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  },
  {
    $id: 'Transaction',
    examples: [
      {
        txnId: 'txn_2kke6dhr97ma42go04h8t6ah7',
        accountId: 'acc_9jmgaru80ak6i73vn4jq4t12f',
        accountDisplayName: 'Example shop',
        extRefId: 'order-1001',
        txnState: 'srccreated',
        msg: '',
        deductNetworkFeesFromDest: false,
        sourceReq: {
          ccy: 'BTC',
          method: 'lightning',
          amtRequested: 0.0005,
          amtSettled: null,
          svcpayFees: 0,
          networkFees: 0,
          reqStatus: '1',
          expiresAt: 1767229200000,
          createAt: 1767225600000,
          updatedAt: 1767225601000,
          reqDetails: {
            paymentRequest: 'lnbcrt500u1p4s9vxrpp5ujc34wrpke5487q976jxh43vaespx029w93z53hxle43xe33g6dq...',
            invoicePageUrl: 'http://localhost:8080/pay/C1JN6G32Abor2S8bSl0gdQ',
          },
        },
        destReq: {
          ccy: 'BTC',
          method: 'svcpay',
          amtRequested: 0.0005,
          amtSettled: null,
          svcpayFees: 0,
          networkFees: 0,
          reqStatus: '0',
          expiresAt: 1767229200000,
          createAt: 1767225600000,
          updatedAt: 1767225601000,
          reqDetails: {},
        },
        fxRate: 1,
        createdAt: 1767225600000,
        updatedAt: 1767225601000,
      },
    ],
  },
)

export const TxnParams = Type.Object({ txnId: Type.String({ maxLength: 64 }) })

export const ListQuerySchema = Type.Object({
  time: Type.Optional(Type.String({ description: '1d, 7d, 30d (default), 3m, 6m, 1y, other' })),
  startTime: Type.Optional(Type.String({ description: 'ISO 8601; with time=other' })),
  endTime: Type.Optional(Type.String({ description: 'ISO 8601; with time=other' })),
  txnStatuses: Type.Optional(Type.String({ description: 'Comma-separated states' })),
  srcMethods: Type.Optional(Type.String()),
  destMethods: Type.Optional(Type.String()),
  excludedSrcMethods: Type.Optional(Type.String()),
  excludedDestMethods: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String({ description: 'Page size, 1-100 (default 20)' })),
  page: Type.Optional(Type.String({ description: 'Page number from 1' })),
  startingAfter: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Cursor: the page of transactions that follow this txnId in the list (older ones), stable while new transactions arrive. Pass the last txnId of the page you have. Not with endingBefore or a page other than 1.',
    }),
  ),
  endingBefore: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Cursor: the page of transactions that come before this txnId in the list (newer ones). Pass the first txnId of the page you have. Not with startingAfter or a page other than 1.',
    }),
  ),
})

export const ListPaginationSchema = Type.Object({
  page: Type.Integer({ description: 'The page number (1 when a cursor is used)' }),
  limit: Type.Integer(),
  total: Type.Integer({ description: 'Every match of the filters, whatever the page or cursor' }),
  hasMore: Type.Boolean({
    description:
      'More matches lie beyond this page in its direction: older ones for page and startingAfter, newer ones for endingBefore',
  }),
})
