create table if not exists stock (sku varchar(64) primary key, quantity int not null, fence bigint not null);
create table if not exists sales (id identity primary key, sku varchar(64) not null, quantity int not null, token bigint not null);
merge into stock (sku, quantity, fence) key (sku) values ('sku-42', 100, 0);
