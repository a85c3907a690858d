/**
 * The server's wire types, each taken from the very TypeBox schema the server validates and
 * documents with. Type-only imports: they vanish from the JavaScript, so the SDK has no runtime
 * dependency on the server, and a change to a server schema changes these types at once.
 *
 * This is the only file of the SDK that reaches outside the package. The packed package carries a
 * self-contained declaration of it instead (scripts/build.mjs writes every type here out in full),
 * so its users need neither the server's sources nor TypeBox.
 */
import type { Static } from 'typebox'
import type {
  CreateBodySchema,
  ListPaginationSchema,
  ListQuerySchema,
  TransactionSchema,
} from '../../../src/transactions/schemas.js'
import type { AccountSchema, WalletSchema } from '../../../src/accounts/schemas.js'
import type { TokenResponseSchema } from '../../../src/auth/schemas.js'
import type {
  AccountNameSchema,
  InstitutionSchema,
  SourceOfFundsCodesSchema,
} from '../../../src/fiat/schemas.js'
import type {
  DeliveryOut,
  DeliveryPageOut,
  StatusEventSchema,
  WebhookBody,
  WebhookOut,
  WebhookRotateBody,
  WebhookRotatedOut,
  WebhookUpdatedOut,
} from '../../../src/events/schemas.js'
import type { AccountLimitsSchema } from '../../../src/limits/routes.js'
import type { ErrorBodySchema } from '../../../src/http/schemas.js'
import type { LightningAddressBody, LightningAddressSchema } from '../../../src/lightning/address/schemas.js'
import type { ErrorCode } from '../../../src/shared/errors.js'

export type WireErrorCode = ErrorCode
export type WireErrorBody = Static<typeof ErrorBodySchema>
export type WireCreateBody = Static<typeof CreateBodySchema>
export type WireListQuery = Static<typeof ListQuerySchema>
export type WireListPagination = Static<typeof ListPaginationSchema>
export type WireTransaction = Static<typeof TransactionSchema>
export type WireWallet = Static<typeof WalletSchema>
export type WireStatusEvent = Static<typeof StatusEventSchema>
export type WireTokenResponse = Static<typeof TokenResponseSchema>
export type WireAccount = Static<typeof AccountSchema>
export type WireWebhookInput = Static<typeof WebhookBody>
export type WireWebhook = Static<typeof WebhookOut>
export type WireWebhookUpdated = Static<typeof WebhookUpdatedOut>
export type WireWebhookRotateBody = Static<typeof WebhookRotateBody>
export type WireWebhookRotated = Static<typeof WebhookRotatedOut>
export type WireAccountLimits = Static<typeof AccountLimitsSchema>
export type WireWebhookDelivery = Static<typeof DeliveryOut>
export type WireWebhookDeliveryList = Static<typeof DeliveryPageOut>
export type WireInstitution = Static<typeof InstitutionSchema>
export type WireSourceOfFundsCodes = Static<typeof SourceOfFundsCodesSchema>
export type WireAccountName = Static<typeof AccountNameSchema>
export type WireLightningAddressInput = Static<typeof LightningAddressBody>
export type WireLightningAddress = Static<typeof LightningAddressSchema>
