import type { BitcoinDeps } from '../bitcoin/deps.js'
import type { LnurlDeps } from './send-destination.js'

/**
 * What the Lightning flows are built from: the deps both Bitcoin rails share, and how a
 * Lightning send reaches a payee named by address or LNURL. It lives here rather than in
 * src/bitcoin so that the shared deps name no module of either rail.
 */
export interface LightningDeps extends BitcoinDeps {
  /**
   * How a Lightning send reaches a payee named by address or LNURL (src/lightning/send-destination.ts);
   * by default: https to public addresses only, and no addresses of this service.
   */
  lnurl?: LnurlDeps
}
