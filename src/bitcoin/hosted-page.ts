import { randomBytes } from 'node:crypto'
import type { Config } from '../config/config.js'

/** A hosted-page id: 128 random bits, URL-safe. It is the page's only secret. */
export const newPageId = () => randomBytes(16).toString('base64url')

export const invoicePageUrl = (config: Config, pageId: string) => `${config.invoicePageUrl}/${pageId}`
