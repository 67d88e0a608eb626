package memstore_test

import (
	"testing"

	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(testing.TB) storetest.Store { return memstore.New() },
		Raw: func(_ testing.TB, s storetest.Store, run string, _ uint64, b []byte) {
			s.(*memstore.Store).AppendRaw(run, b)
		},
	})
}
