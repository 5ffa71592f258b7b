/**
 * The raw material of generated records. Descriptions and extra_data are chosen to hurt: unicode, quotes,
 * commas, newlines and text a spreadsheet would run as a formula, so every consumer (warehouse, CSV
 * export) is exercised on them. Each is pre-serialised once, which keeps serving fast.
 */
import { type Rng, intBetween, pick } from './prng.js';

export const DESCRIPTIONS: readonly string[] = [
  'Paiement facture',
  'Achat en ligne',
  'Abonnement mensuel',
  'Paiement café — Cotonou ✓',
  'Recharge crédit Dakar',
  'دفع فاتورة الكهرباء',
  'Commande 🍕🍔 livraison',
  'Frais de scolarité 2024/2025',
  'He said "pay now", then left',
  "L'achat d'un pagne, taille M",
  'Ligne 1\nLigne 2',
  'Retour chariot\r\nfin',
  'Montant: 1,500.50 XOF; réf: A,B,C',
  '=HYPERLINK("http://x")',
  '+SUM(A1)',
  '-2+3',
  '@cmd',
  '\tTabulation en tête',
  'Ünïcödé ñ ß 漢字 テスト',
  'Back\\slash and /slash',
  'Paiement marchand #4521',
  'Transport Abidjan → Bouaké',
];

export const EXTRA_DATA: readonly Record<string, unknown>[] = [
  {},
  {},
  { order_id: 'CMD-1042' },
  { customer: { name: 'Awa Diop', email: 'awa@example.com' }, items: 3 },
  { source: 'web', campaign: null, tags: ['promo', 'noël'] },
  { note: 'ligne 1\nligne 2, "quoted"' },
  { nested: { deep: { deeper: { value: 1.5 } } } },
  { invoice: 'INV/2024/0007', paid_by: '=cmd|"/c calc"!A0' },
  { empty_list: [], flag: true, count: 0 },
];

export const DESCRIPTION_JSON = DESCRIPTIONS.map((d) => JSON.stringify(d));
export const EXTRA_DATA_JSON = EXTRA_DATA.map((e) => JSON.stringify(e));

/** Operator code → phone prefix and number of local digits after it. */
export const OPERATORS: readonly { code: string; prefix: string; digits: number }[] = [
  { code: 'MTN_BJ', prefix: '+22997', digits: 6 },
  { code: 'MTN_BJ', prefix: '+22996', digits: 6 },
  { code: 'MOOV_BJ', prefix: '+22995', digits: 6 },
  { code: 'ORANGE_CI', prefix: '+22507', digits: 8 },
  { code: 'WAVE_SN', prefix: '+22177', digits: 7 },
];

export const NAMES: readonly string[] = [
  'Koffi Mensah',
  'Aïcha Traoré',
  'Jean-Baptiste Agossou',
  "N'Golo Kanté",
  'Fatou "Fa" Ndiaye',
  'محمد ولد أحمد',
  'Marie-Claire Houngbédji',
  '=1+1 Test',
  'Ousmane Sow, Jr.',
];
export const NAME_JSON = NAMES.map((n) => JSON.stringify(n));

/** Amounts that must survive every hop exactly; all canonical JavaScript numbers. */
const SPECIAL_AMOUNTS = [1500.5, 99.99, 250000000, 0.01, 1, 999999999.99, 12345.67, 100];

export function amountOf(rng: Rng): number {
  const r = rng();
  if (r < 0.06) return pick(rng, SPECIAL_AMOUNTS);
  if (r < 0.2) return Math.round(rng() * 5_000_000) / 100; // two decimals at most
  return intBetween(rng, 1, 20_000) * 25;
}

export function phoneOf(rng: Rng, operator: { prefix: string; digits: number }): string {
  const local = Math.floor(rng() * 10 ** operator.digits);
  return operator.prefix + String(local).padStart(operator.digits, '0');
}
