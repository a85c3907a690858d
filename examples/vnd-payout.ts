// Pay out Vietnamese dong to a bank account: pick the bank, declare the source of funds and the
// beneficiary (KYC), then follow the payout to its outcome.
import { SvcpayClient } from '@svcpay/sdk'

const { SANDBOX = 'true' } = process.env
const svcpay = SvcpayClient.fromEnv()

if (SANDBOX === 'true') await svcpay.sandbox.fund({ ccy: 'VND', amount: '5000000' })

// Banks by their NAPAS BIN code, and the code tables of sourceOfFunds.
const bank = (await svcpay.listInstitutions('VND')).find((b) => b.shortName === 'Vietcombank')!
const codes = await svcpay.getSourceOfFundsCodes()
const code = (table: { code: number; label: string }[], label: string) =>
  table.find((c) => c.label === label)!.code
console.log(`bank: ${bank.shortName} (${bank.code})`)

const quote = await svcpay.createTransaction({
  extRefId: `vnd-${Date.now()}`,
  sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'VND',
    method: 'vnd-instant',
    amtRequested: '2000000',
    // In the sandbox an account number ending 0000 is rejected by the bank and 1111 fails.
    reqDetails: { bankAcctNum: process.env.BANK_ACCOUNT ?? '0123456789', institutionCode: bank.code },
    kyc: { type: 'individual', details: { legalFullName: 'Nguyễn Thị Minh Khai', countryCode: 'VN' } },
  },
  sourceOfFunds: {
    purpose: code(codes.purpose, 'Family support'),
    source: code(codes.source, 'Salary'),
    relationship: code(codes.relationship, 'Family member'),
  },
})
console.log(`paying ${quote.destReq.amtRequested} VND, fee ${quote.sourceReq.svcpayFees} VND`)
await svcpay.confirmTransaction(quote.txnId)

// waitForTransaction follows the status stream to a final state: completed, failed or rejected.
const done = await svcpay.waitForTransaction(quote.txnId, { timeoutMs: 60_000 })
console.log('state:', done.txnState, done.msg, 'bankRef:', done.destReq.reqDetails.bankRef ?? '-')
