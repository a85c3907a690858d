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
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Method-specific details. A Lightning send (destReq, method lightning) names exactly one of: ' +
        '`paymentRequest` (a BOLT11 invoice); `lnAddress` (a Lightning Address, user@domain, LUD-16, ' +
        'at most 320 characters); `lnurl` (a bech32 lnurl1… of LUD-01 or an lnurlp:// link of LUD-17, ' +
        'https only). An address or LNURL needs amtRequested (BTC) and may carry `comment` (LUD-12, at ' +
        "most the payee's commentAllowed and 640 characters). The quote fetches the payee's invoice for " +
        'exactly that amount and shows it as paymentRequest; an address of this service is paid inside it. ' +
        'Other methods: address (on-chain send, tron, eth: for eth 0x and 40 hex digits, all lower or all upper case or in its EIP-55 checksum form; a mixed-case address whose checksum fails is 400 invalid_address); bankAcctNum and institutionCode (vnd-instant), and for vnd-instant optionally expectedName (1-140 characters): the beneficiary name you expect; the bank is asked for the holder’s name before sending and a payout whose name does not match (compared without accents, case and spacing; see GET /api/v2/fiat/account-name) ends rejected with msg beneficiary_name_mismatch, its funds released.',
      examples: [
        { paymentRequest: 'lnbcrt100u1p4s9vxrpp5ujc34wrpke5487q976jxh43vaespx029w93z53hxle43xe33g6dq...' },
        { lnAddress: 'alice@wallet.example', comment: 'Thanks for lunch' },
        { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' },
        {
          lnurl:
            'lnurl1dp68gurn8ghj7um9wfmxjcm99e3k7mf0v9cxj0m385ekvcenxc6r2c35xvukxefcv5mkvv34x5ekzd3ev56nyd3hxqurzepexejxxepnxscrvwfnv9nxzcn9xq6xyefhvgcxxcmyxymnserxfq5fns',
        },
      ],
    }),
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
        extRefId: 'invoice-2002',
        sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
        destReq: { ccy: 'USDT', method: 'svcpay', amtRequested: 25, reqDetails: {} },
      },
      {
        extRefId: 'payout-2001',
        sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'VND',
          method: 'vnd-instant',
          amtRequested: 500000,
          reqDetails: {
            bankAcctNum: '0011004567890',
            institutionCode: '970436',
            expectedName: 'Nguyễn Văn An',
          },
          kyc: { type: 'individual', details: { legalFullName: 'Nguyễn Văn An', countryCode: 'VN' } },
        },
        sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
      },
      {
        extRefId: 'lunch-42',
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'lightning',
          amtRequested: 0.0001,
          reqDetails: { lnAddress: 'alice@wallet.example', comment: 'Thanks for lunch' },
        },
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
      'Method-specific output: paymentRequest and invoicePageUrl (Lightning receive), address, amount, invoice, invoicePageUrl and expiredAt (on-chain receive), bankBin, bankName, bankAcctNum, accountName, amount, memo, vietQr, invoicePageUrl and expiredAt (VND receive over VietQR), paymentRequest, paymentHash and the lnAddress, lnurl and comment it was fetched with (Lightning send), txid, preimage, txHash or bankRef once sent; for an eth payout the address in its EIP-55 form, maxFeeWei (the most its gas may cost, in wei, as decimal text, which networkFees pays for in USDT), txHash once sent (the mined one once final) and chainFeeEth once final; nameCheck "matched" once the bank confirmed a VND payout’s expectedName',
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
  page: Type.Optional(
    Type.String({
      description:
        'Page number from 1. An offset: transactions created while you read push later pages down, so a row can appear twice; page by startingAfter for a walk that sees each row once.',
    }),
  ),
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
