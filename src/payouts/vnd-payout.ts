import { allInRate, ONE } from '../rates/fx.js'
import { assert } from '../shared/assert.js'
import { checkBankAccount, checkKyc, type Kyc } from '../fiat/kyc.js'
import { checkSourceOfFunds, type SourceOfFunds } from '../fiat/source-of-funds.js'
import type { CreateInput, Flow, Quote, QuoteContext } from '../transactions/flow.js'
import { requestedAmount, walletAmounts } from '../transactions/money.js'
import { isMoneyError, type MoneyError } from '../transactions/errors.js'
import { bankAccountError, kycError, payoutError, sourceOfFundsError, type PayoutError } from './errors.js'
import type { VndPayoutDeps } from './deps.js'
import { payoutFlow } from './lifecycle.js'
import { VND_PAYOUT } from './kinds.js'
import { checkBeneficiaryName } from './vnd-name-check.js'
import { checkExpectedName } from '../fiat/beneficiary-name.js'

/**
 * VND to a bank account, from a VND, BTC or USDT wallet (converted at the all-in rate as a swap
 * is). The bank account, the beneficiary's KYC and the source of funds are checked at quote; the
 * KYC is kept on the transaction row only, for the bank, and never logged. A payout naming
 * `reqDetails.expectedName` is sent only after the bank confirmed that name (vnd-name-check.ts).
 */
export function vndPayoutFlow(deps: VndPayoutDeps): Flow {
  return payoutFlow(deps, {
    kind: VND_PAYOUT.kind,
    rail: VND_PAYOUT.rail,
    system: 'bank',
    refField: 'bankRef',
    pollMs: deps.pollMs,
    refusedReason: 'rejected_by_bank',
    quote: (ctx) => quoteVndPayout(deps, ctx),
    async submit(txn) {
      const { bankAcctNum, institutionCode } = txn.destDetails
      assert(
        typeof bankAcctNum === 'string' && typeof institutionCode === 'string',
        'a VND payout stores its bank account',
      )
      assert(txn.kyc && txn.sourceOfFunds, 'a VND payout stores its KYC and source of funds')
      const kyc = txn.kyc as unknown as Kyc
      const refusal = await checkBeneficiaryName(deps, txn, { bankAcctNum, institutionCode })
      if (refusal) return refusal
      const { bankRef } = await deps.bank.submitPayout({
        requestId: txn.id,
        amountMinor: txn.destAmountMinor,
        ccy: 'VND',
        bankAcctNum,
        institutionCode,
        beneficiary: { type: kyc.type, ...kyc.details },
        sourceOfFunds: txn.sourceOfFunds as unknown as SourceOfFunds,
      })
      return bankRef
    },
    check: (ref) => deps.bank.getPayout(ref),
  })
}

/**
 * What a bank payout request names, checked in this order: the account (with the optional
 * `expectedName` of its holder), the KYC, the source of funds.
 */
export function bankDestination(input: CreateInput):
  | {
      account: { bankAcctNum: string; institutionCode: string; expectedName?: string }
      kyc: Kyc
      sourceOfFunds: SourceOfFunds
    }
  | PayoutError {
  const details = input.destReq.reqDetails ?? {}
  const account = checkBankAccount(details.bankAcctNum, details.institutionCode)
  if (!account.ok) return bankAccountError(account)
  const expectedName = checkExpectedName(details.expectedName)
  if (!expectedName.ok) return payoutError('expected_name_invalid', expectedName.details)
  const kyc = checkKyc(input.destReq.kyc)
  if (!kyc.ok) return kycError(kyc)
  const sourceOfFunds = checkSourceOfFunds(input.sourceOfFunds)
  if (!sourceOfFunds.ok) return sourceOfFundsError(sourceOfFunds)
  const holder = expectedName.value === undefined ? {} : { expectedName: expectedName.value }
  return { account: { ...account.value, ...holder }, kyc: kyc.value, sourceOfFunds: sourceOfFunds.value }
}

async function quoteVndPayout(
  deps: VndPayoutDeps,
  { input, rates }: QuoteContext,
): Promise<Quote | MoneyError | PayoutError> {
  const destination = bankDestination(input)
  if ('kind' in destination) return destination
  const src = input.sourceReq.ccy
  const fx =
    src === 'VND'
      ? ONE
      : allInRate(deps.rates.perBtc(rates, src), deps.rates.perBtc(rates, 'VND'), deps.config.fxSpreadBps)
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  const amounts = walletAmounts({
    requested,
    srcCcy: src,
    destCcy: 'VND',
    fx,
    feeRule: deps.config.fees['vnd-instant']!,
    networkFee: 0n,
    deduct: input.deductNetworkFeesFromDest,
  })
  if (isMoneyError(amounts)) return amounts
  return {
    ...amounts,
    srcNetworkFee: 0n,
    fxRate: fx,
    srcDetails: {},
    destDetails: { ...destination.account },
    kyc: destination.kyc as unknown as Record<string, unknown>,
    sourceOfFunds: destination.sourceOfFunds as unknown as Record<string, unknown>,
    fromWallet: true,
  }
}
