/**
 * The on-chain rail watching through an Esplora REST API (Blockstream's electrs, mempool.space, or
 * one's own instance). Esplora indexes every address, so nothing needs importing, but it holds no
 * keys: sending needs a signer of the operator's (`broadcast.sign`), and this rail then only
 * broadcasts the signed transaction. Without one the rail says so (`sendUnavailable`): a send is
 * refused at its quote, and `send` itself refuses with `not_supported`.
 *
 * Esplora amounts are integer satoshis; fee estimates are sat/vB floats keyed by target blocks.
 *
 * The rail is a table of functions over one set of deps (esplora-deps.ts): the request and its
 * failure codes (esplora-http.ts), outputs, transactions and fee rates (esplora-outputs.ts), the
 * signer and the broadcast (esplora-send.ts), the health check (esplora-check.ts) and
 * reconciliation (esplora-reconcile.ts).
 */
import { checkAddressText } from '../../rails/http-json.js'
import type { OnchainRail } from '../../rails/rail.js'
import { checkEsplora } from './esplora-check.js'
import { esploraDeps, type EsploraRailOptions } from './esplora-deps.js'
import { getJson, tipHeight } from './esplora-http.js'
import { estimateFeeRate, getTransaction, listOutputs } from './esplora-outputs.js'
import { esploraPayments, esploraReserves, type EsploraReconcileDeps } from './esplora-reconcile.js'
import { send } from './esplora-send.js'

export { GENESIS_HASHES } from './esplora-check.js'
export type { EsploraRailOptions, OnchainSigner } from './esplora-deps.js'
export { parseBroadcastRefusal } from './esplora-send.js'

export function createEsploraRail(options: EsploraRailOptions): OnchainRail {
  const deps = esploraDeps(options)
  const receiveAddresses = options.receiveAddresses
  const reconcileDeps: EsploraReconcileDeps | null = receiveAddresses
    ? {
        getJson: (path) => getJson(deps.request, path),
        tipHeight: () => tipHeight(deps.request),
        receiveAddresses,
        walletAddresses: options.broadcast?.addresses ?? (async () => []),
        creditConfirmations: options.creditConfirmations ?? 1,
      }
    : null

  return {
    name: 'esplora',
    network: options.network,
    ...(reconcileDeps
      ? {
          reserves: () => esploraReserves(reconcileDeps),
          payments: (sinceMs: number) => esploraPayments(reconcileDeps, sinceMs),
        }
      : {}),
    // The signer returns the same signed transaction for the same request id (its contract).
    resendsSameTransaction: true,
    ...(options.broadcast
      ? {}
      : {
          sendUnavailable:
            'On-chain sends are not available: the Esplora rail has no signer (ONCHAIN=esplora)',
        }),
    async watchAddress(address) {
      // Esplora indexes every address; there is nothing to import.
      checkAddressText(address)
    },
    listOutputs: (address) => listOutputs(deps, address),
    estimateFeeRate: (targetBlocks) => estimateFeeRate(deps, targetBlocks),
    send: (input) => send(deps, input),
    getTransaction: (txid) => getTransaction(deps, txid),
    check: () => checkEsplora(deps),
  }
}
