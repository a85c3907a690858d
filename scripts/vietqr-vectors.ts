/**
 * Writes src/payins/vietqr.vectors.json: VietQR payloads made by `vietnam-qr-pay` (an independent
 * encoder from the npm registry, a dev dependency), which src/payins/vietqr.test.ts compares our
 * encoder against byte for byte. Run `npx tsx scripts/vietqr-vectors.ts` after changing the cases;
 * the file is committed so a change of that package cannot silently move the expectations.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { QRPay } from 'vietnam-qr-pay'
import { ROOT } from './build.js'

interface VectorCase {
  name: string
  bankBin: string
  accountNumber: string
  /** Whole đồng as integer text; absent for a static code. */
  amount?: string
  memo?: string
}

const CASES: VectorCase[] = [
  { name: 'static, Vietcombank, no memo', bankBin: '970436', accountNumber: '0011001932418' },
  {
    name: 'static with memo, VietinBank',
    bankBin: '970415',
    accountNumber: '113366668888',
    memo: 'UNG HO QUY',
  },
  { name: 'dynamic, MB, 1 dong', bankBin: '970422', accountNumber: '0123456789', amount: '1' },
  {
    name: 'dynamic, ACB, 10000 dong with memo',
    bankBin: '970416',
    accountNumber: '12345678',
    amount: '10000',
    memo: 'SVCPAY 7F3KQ2',
  },
  {
    name: 'dynamic, largest 12-digit amount',
    bankBin: '970436',
    accountNumber: '1017654321',
    amount: '999999999999',
    memo: 'TT HOA DON 2026-11',
  },
  { name: 'one-character account', bankBin: '970422', accountNumber: '7', amount: '500000' },
  {
    name: '19-character account',
    bankBin: '970415',
    accountNumber: '1234567890123456789',
    amount: '250000',
    memo: 'INV 19',
  },
  {
    name: 'account with letters (virtual account)',
    bankBin: '970416',
    accountNumber: 'VQRQ00AB12cd',
    amount: '75000',
  },
  {
    name: 'memo of 95 characters, the longest tag 62 can hold',
    bankBin: '970436',
    accountNumber: '0071000888999',
    amount: '123456',
    memo: 'A'.repeat(45) + ' ' + 'B'.repeat(49),
  },
  {
    name: 'memo with spaces at its ends and inside',
    bankBin: '970422',
    accountNumber: '9704229999',
    amount: '20000',
    memo: ' chuyen  tien nha ',
  },
  {
    name: 'memo with punctuation',
    bankBin: '970416',
    accountNumber: '888888',
    amount: '1500000',
    memo: 'Thanh toan #42: ca phe & banh (x2)',
  },
  {
    name: 'static, Techcombank, 14-digit account',
    bankBin: '970407',
    accountNumber: '19036291234011',
    memo: 'SVCPAY',
  },
  { name: 'dynamic, BIDV, no memo', bankBin: '970418', accountNumber: '21510001234567', amount: '3000000' },
  {
    name: 'dynamic, Sacombank, memo of one character',
    bankBin: '970403',
    accountNumber: '060123456789',
    amount: '99',
    memo: 'X',
  },
]

function vietQrPayVersion(): string {
  const require = createRequire(import.meta.url)
  const manifest = require.resolve('vietnam-qr-pay/package.json')
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

const vectors = {
  source:
    `Payloads built by vietnam-qr-pay ${vietQrPayVersion()} (npm, QRPay.initVietQR({ bankBin, bankNumber, amount, purpose }).build()), ` +
    'an implementation independent of src/payins/vietqr.ts; regenerate with `npx tsx scripts/vietqr-vectors.ts`.',
  cases: CASES.map((c) => ({
    ...c,
    payload: QRPay.initVietQR({
      bankBin: c.bankBin,
      bankNumber: c.accountNumber,
      ...(c.amount === undefined ? {} : { amount: c.amount }),
      ...(c.memo === undefined ? {} : { purpose: c.memo }),
    }).build(),
  })),
}

writeFileSync(join(ROOT, 'src/payins/vietqr.vectors.json'), `${JSON.stringify(vectors, null, 2)}\n`)
