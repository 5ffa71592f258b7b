console.log('paysync: CLI under construction');
