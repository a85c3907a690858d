import { CliError, need, type Commands } from './args.js'
import { call, type DataList } from './client.js'

interface Bumped {
  txnId: string
  replacedTxid: string
  txid: string
  feeRateSatPerVb: number
}

interface Reorged {
  txnId: string
  txid: string
  vout: number
  amountSats: string
  reorgedAt: number
}

/** On-chain sends and deposits an operator looks after. */
export const onchainCommands: Commands = {
  async 'onchain bumpfee'({ rest, flags, print }) {
    // A stuck on-chain send: its transaction is replaced (BIP 125) at a higher fee rate.
    if (!rest[0]) throw new CliError('usage: svcpay onchain bumpfee TXN_ID [--rate SAT_PER_VB]')
    const rate = flags.rate === undefined ? undefined : Number(need(flags, 'rate'))
    if (rate !== undefined && !(Number.isSafeInteger(rate) && rate >= 1))
      throw new CliError('--rate: a whole number of sat/vB')
    const r = await call<Bumped>(
      'POST',
      `/admin/onchain/sends/${encodeURIComponent(rest[0])}/bumpfee`,
      rate === undefined ? {} : { feeRate: rate },
    )
    return print(r, `${r.txnId}: ${r.replacedTxid} replaced by ${r.txid} at ${r.feeRateSatPerVb} sat/vB`)
  },

  async 'onchain reorgs'({ print }) {
    const r = await call<DataList<Reorged>>('GET', '/admin/onchain/reorgs')
    return print(
      r.data,
      r.data
        .map(
          (d) =>
            `${d.txnId}  ${d.txid}:${d.vout}  ${d.amountSats} sats  left the chain at ${new Date(d.reorgedAt).toISOString()}`,
        )
        .join('\n') || '(none)',
    )
  },
}
