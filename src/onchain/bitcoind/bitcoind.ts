/**
 * The on-chain rail on Bitcoin Core's wallet, through JSON-RPC 1.0 over HTTP basic auth.
 *
 * Two wallets are involved. Sends need a wallet with keys (`wallet`, the hot wallet). Receive
 * addresses are derived by the service from its account xpub; Bitcoin Core accepts key-less
 * descriptors only into a wallet whose private keys are disabled (src/wallet/rpc/backup.cpp,
 * importdescriptors: -4 "Cannot import descriptor without private keys to a wallet with private
 * keys enabled"), so they are watched in a separate watch-only wallet (`watchWallet`, default
 * `<wallet>-watch`, created blank and key-less when missing). There the rail imports ONE ranged
 * descriptor, `wpkh(<xpub>/0/*)`, and widens its range as indexes are handed out, instead of one
 * `addr()` per address.
 *
 * `sendtoaddress` answers with a txid even when the node's mempool refused the transaction: the
 * wallet keeps it and only logs "Transaction cannot be broadcast immediately"
 * (src/wallet/wallet.cpp, CWallet::CommitTransaction). Every send is therefore checked against the
 * mempool (`getmempoolentry`); one the mempool refuses is abandoned and reported as refused.
 *
 * Amounts in RPC answers are JSON numbers in BTC with eight decimals. They are parsed from their
 * source text, never through a float; amounts we send are written as decimal strings, which every
 * amount argument of the RPC accepts.
 *
 * The rail is a table of functions over one set of deps (bitcoind-deps.ts): the call and its
 * failure codes (bitcoind-rpc.ts), amounts (bitcoind-amount.ts), descriptor checksums
 * (bitcoind-descriptor.ts), the watch wallet and receipts (bitcoind-watch.ts), sends and fees
 * (bitcoind-send.ts), the health check (bitcoind-check.ts) and reconciliation (bitcoind-reconcile.ts).
 */
import type { OnchainRail } from '../../rails/rail.js'
import { btcToSats } from './bitcoind-amount.js'
import { checkBitcoind } from './bitcoind-check.js'
import { bitcoindDeps, type BitcoindRailOptions } from './bitcoind-deps.js'
import { bitcoindPayments, bitcoindReserves, type BitcoindReconcileDeps } from './bitcoind-reconcile.js'
import { call } from './bitcoind-rpc.js'
import { bumpFee, estimateFeeRate, getTransaction, startSend } from './bitcoind-send.js'
import { ensureWatchWallet, listOutputs, payersOf, watchAddress } from './bitcoind-watch.js'

export type { BitcoindRailOptions } from './bitcoind-deps.js'
export { btcToSats, satsToBtcText } from './bitcoind-amount.js'
export { descriptorChecksum } from './bitcoind-descriptor.js'
export { DESCRIPTOR_RANGE_AHEAD } from './bitcoind-watch.js'

export function createBitcoindRail(options: BitcoindRailOptions): OnchainRail {
  const deps = bitcoindDeps(options)
  const reconcileDeps: BitcoindReconcileDeps = {
    call: (wallet, method, params) => call(deps, wallet, method, params),
    watchReady: () => ensureWatchWallet(deps),
    hotWallet: deps.hotWallet,
    watchWallet: deps.watchWallet,
    creditConfirmations: options.creditConfirmations ?? 1,
    sats: btcToSats,
  }
  return {
    name: 'bitcoind',
    network: options.network,
    reserves: () => bitcoindReserves(reconcileDeps),
    payments: (sinceMs) => bitcoindPayments(reconcileDeps, sinceMs),
    watchAddress: (address, index) => watchAddress(deps, address, index),
    listOutputs: (address) => listOutputs(deps, address),
    payersOf: (txid, blockHash) => payersOf(deps, txid, blockHash),
    estimateFeeRate: (targetBlocks) => estimateFeeRate(deps, targetBlocks),
    send: (input) => startSend(deps, input),
    getTransaction: (txid) => getTransaction(deps, txid),
    bumpFee: (txid, feeRateSatPerVb) => bumpFee(deps, txid, feeRateSatPerVb),
    check: () => checkBitcoind(deps),
  }
}
