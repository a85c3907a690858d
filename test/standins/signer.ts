/**
 * The operator's signer for the Esplora rail, in a test: a key of its own, a coin funded on the
 * stand-in chain for each new request id, and a real signed P2WPKH transaction paying the send
 * and the change back. Same request id, same transaction (the OnchainSigner contract).
 */
import { hex } from '@scure/base'
import { p2wpkh, Transaction } from '@scure/btc-signer'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import type { OnchainSigner } from '../../src/onchain/esplora/esplora.js'
import type { Chain, ChainTx } from './chain.js'

const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }

export function testSigner(chain: Chain, opts: { coinSats?: bigint } = {}) {
  const privateKey = new Uint8Array(32).fill(7)
  const self = p2wpkh(secp256k1.getPublicKey(privateKey, true), REGTEST)
  const signed = new Map<string, { rawTxHex: string; coin: ChainTx }>()
  const sign: OnchainSigner = async (input) => {
    const known = signed.get(input.requestId)
    if (known) return { rawTxHex: known.rawTxHex }
    const coinSats = opts.coinSats ?? 10_000_000n
    const coin = chain.fund(self.address!, coinSats)
    const tx = new Transaction()
    tx.addInput({ txid: coin.txid, index: 0, witnessUtxo: { script: self.script, amount: coinSats } })
    tx.addOutputAddress(input.address, input.amountSats, REGTEST)
    // A one-input, two-output P2WPKH transaction is 141 vB.
    const fee = input.feeRateSatPerVb * 141n
    tx.addOutputAddress(self.address!, coinSats - input.amountSats - fee, REGTEST)
    tx.sign(privateKey)
    tx.finalize()
    const rawTxHex = hex.encode(tx.extract())
    signed.set(input.requestId, { rawTxHex, coin })
    return { rawTxHex }
  }
  return {
    sign,
    address: self.address!,
    /** The coin a request's transaction spends (for a test to double-spend it). */
    coinOf: (requestId: string) => signed.get(requestId)?.coin,
    calls: () => signed.size,
  }
}
