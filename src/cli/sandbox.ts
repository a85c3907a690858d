import { CliError, need, type Commands } from './args.js'
import { call } from './client.js'

/** The sandbox rails' outside world: money funded, paid, sent and mined on request. */
export const sandboxCommands: Commands = {
  async 'sandbox fund'({ flags, print }) {
    const r = await call<{ data: { ccy: string; id: string; amount: string } }>(
      'POST',
      '/admin/sandbox/fund',
      {
        accountId: need(flags, 'account'),
        ccy: need(flags, 'ccy').toUpperCase(),
        amount: need(flags, 'amount'),
      },
    )
    return print(r, `funded: ${r.data.ccy} wallet ${r.data.id} now ${r.data.amount}`)
  },

  async 'sandbox ln-pay'({ rest, print }) {
    if (!rest[0]) throw new CliError('usage: svcpay sandbox ln-pay PAYMENT_REQUEST')
    const r = await call<unknown>('POST', '/admin/sandbox/lightning/pay', { paymentRequest: rest[0] })
    return print(r, `paid: ${JSON.stringify(r)}`)
  },

  async 'sandbox ln-invoice'({ flags, print }) {
    const r = await call<{ paymentRequest: string }>('POST', '/admin/sandbox/lightning/invoice', {
      ...(flags.amount ? { amount: need(flags, 'amount') } : {}),
      ...(flags.outcome ? { outcome: need(flags, 'outcome') } : {}),
    })
    return print(r, r.paymentRequest)
  },

  async 'sandbox onchain-send'({ rest, print }) {
    const [address, amount] = rest
    if (!address || !amount) throw new CliError('usage: svcpay sandbox onchain-send ADDRESS AMOUNT_BTC')
    const r = await call<{ txid: string }>('POST', '/admin/sandbox/onchain/send', { address, amount })
    return print(r, `sent: txid ${r.txid}`)
  },

  async 'sandbox mine'({ rest, print }) {
    const r = await call<{ height: number }>('POST', '/admin/sandbox/onchain/mine', {
      blocks: Number(rest[0] ?? 1),
    })
    return print(r, `mined to height ${r.height}`)
  },

  async 'sandbox vnd-transfer'({ flags, print }) {
    const r = await call<{ bankRef: string; amount: string; outcome: string; txnId?: string | null }>(
      'POST',
      '/admin/sandbox/vnd/transfer',
      { memo: need(flags, 'memo'), amount: need(flags, 'amount') },
    )
    return print(r, `transfer ${r.bankRef} of ${r.amount} VND: ${r.outcome}${r.txnId ? ` (${r.txnId})` : ''}`)
  },
}
