from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ReadStorage
from app.schemas.laws import PredictCreate, PredictPublic
from app.services.laws import predict

router = APIRouter(tags=["predict"])


@router.post("/predict", response_model=PredictPublic,
             summary="Predict at new points with a run's law, one of its candidates, or a posted law")
def predict_points(req: PredictCreate, storage: ReadStorage) -> PredictPublic:
    return predict(storage, req)
