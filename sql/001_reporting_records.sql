-- 001: the reporting schema and one table per stream, one row per record id.
--
-- Money is NUMERIC with no scale: an amount is stored exactly as the service sent it (1500.5 stays
-- 1500.5, 250000000 stays 250000000); it is never rounded to a currency scale we would have to guess.
-- status / transaction_type are plain text on purpose: the service may grow new values, and a CHECK
-- would turn that into failed loads. The loader's zod schemas decide what is valid; the README lists
-- the known values.
-- fillfactor 50: every lookback re-read rewrites each row it sees (synced_at moves even when nothing
-- else does). With half of each page free, that new row version fits on the same page, so the update
-- is HOT (no index writes; earlier versions are pruned in place). Measured in bench/loader.ts: a reload
-- of unchanged rows became cheaper than the first load instead of dearer. Costs about twice the disk.
CREATE SCHEMA IF NOT EXISTS reporting;

CREATE TABLE reporting.payments (
  id                  text        PRIMARY KEY,
  reference           text        NOT NULL,
  amount              numeric     NOT NULL,
  description         text        NOT NULL,
  status              text        NOT NULL,
  transaction_type    text        NOT NULL,
  phone               text,
  service_mobile_code text,
  extra_data          jsonb       NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  organization_id     text        NOT NULL,
  api_key_id          text        NOT NULL,
  source              text        NOT NULL,
  first_seen_at       timestamptz NOT NULL DEFAULT now(),
  synced_at           timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);

COMMENT ON TABLE reporting.payments IS
  'One row per payment id, the newest version the service sent (by updatedAt). Loaded by paysync.';
COMMENT ON COLUMN reporting.payments.amount IS 'Exact amount as sent by the service (no scale imposed).';
COMMENT ON COLUMN reporting.payments.source IS 'paysync source that delivered the current version.';
COMMENT ON COLUMN reporting.payments.first_seen_at IS 'When paysync first stored this payment.';
COMMENT ON COLUMN reporting.payments.synced_at IS 'When paysync last received this payment, changed or not.';

-- Transfers carry no organisation in the interface: organization_id is the one of the source that read them.
CREATE TABLE reporting.transfers (
  id                  text        PRIMARY KEY,
  reference           text        NOT NULL,
  amount              numeric     NOT NULL,
  name                text        NOT NULL,
  phone               text        NOT NULL,
  service_mobile_code text        NOT NULL,
  status              text        NOT NULL,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  source              text        NOT NULL,
  organization_id     text,
  first_seen_at       timestamptz NOT NULL DEFAULT now(),
  synced_at           timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);

COMMENT ON TABLE reporting.transfers IS
  'One row per transfer id, the newest version the service sent (by updatedAt). Loaded by paysync.';
COMMENT ON COLUMN reporting.transfers.organization_id IS
  'Organisation of the source that read the transfer (the interface gives transfers none).';
COMMENT ON COLUMN reporting.transfers.synced_at IS 'When paysync last received this transfer, changed or not.';
